"""Name lists for fictional people: six naming cultures, most of them non-ASCII.

Written here by hand (no name data set is downloaded). Each culture has 20 female and 20 male
given names and 40 family names; a family name is one string, or a (male, female) pair where the
language marks gender (Polish -ski/-ska, Icelandic -son/-dóttir). Vietnamese names are written
family name first, as Wikidata's English labels write them ("Nguyễn Văn Minh").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Culture:
    """One naming tradition: given names by gender, family names, and the order they go in."""

    name: str
    female: tuple[str, ...]
    male: tuple[str, ...]
    family: tuple[str | tuple[str, str], ...]
    family_first: bool = False

    def full_name(self, given: str, family_index: int, female: bool) -> str:
        family = self.family[family_index]
        if isinstance(family, tuple):
            family = family[1] if female else family[0]
        return f"{family} {given}" if self.family_first else f"{given} {family}"


def _ski(stem: str) -> tuple[str, str]:
    return (stem + "ski", stem + "ska")


def _icelandic(stem: str) -> tuple[str, str]:
    return (stem + "son", stem + "dóttir")


POLISH = Culture(
    name="Polish",
    female=(
        "Anna", "Zofia", "Małgorzata", "Katarzyna", "Agnieszka", "Joanna", "Magdalena", "Ewa",
        "Barbara", "Krystyna", "Jadwiga", "Elżbieta", "Grażyna", "Halina", "Bożena", "Dorota",
        "Urszula", "Wiesława", "Jolanta", "Beata",
    ),
    male=(
        "Jan", "Piotr", "Krzysztof", "Andrzej", "Tomasz", "Paweł", "Michał", "Marcin", "Łukasz",
        "Jakub", "Mateusz", "Grzegorz", "Wojciech", "Zbigniew", "Józef", "Stanisław", "Tadeusz",
        "Bartłomiej", "Przemysław", "Mirosław",
    ),
    family=(
        "Nowak", _ski("Kowal"), _ski("Wiśniew"), "Wójcik", "Kowalczyk", _ski("Kamiń"),
        _ski("Lewandow"), _ski("Zieliń"), _ski("Szymań"), "Woźniak", _ski("Dąbrow"),
        _ski("Kozłow"), "Mazur", "Krawczyk", _ski("Piotrow"), _ski("Grabow"), _ski("Pawłow"),
        _ski("Michal"), "Król", "Wieczorek", _ski("Jabłoń"), "Wróbel", _ski("Majew"),
        _ski("Olszew"), _ski("Jawor"), "Stępień", _ski("Malinow"), _ski("Gór"), _ski("Rutkow"),
        "Sikora", "Baran", "Szewczyk", _ski("Tomaszew"), "Pietrzak", "Marciniak",
        _ski("Wróblew"), _ski("Zalew"), "Kaczmarek", "Sobczak", "Żak",
    ),
)

GERMAN = Culture(
    name="German",
    female=(
        "Ursula", "Sabine", "Brigitte", "Renate", "Jutta", "Gudrun", "Bärbel", "Käthe", "Annegret",
        "Heike", "Sigrid", "Dörte", "Birgit", "Monika", "Gisela", "Susanne", "Katharina", "Lena",
        "Ilse", "Hannelore",
    ),
    male=(
        "Jürgen", "Klaus", "Günter", "Wolfgang", "Dieter", "Manfred", "Uwe", "Jörg", "Rüdiger",
        "Matthias", "Tobias", "Florian", "Sebastian", "Andreas", "Stefan", "Lukas", "Felix", "Bernd",
        "Horst", "Götz",
    ),
    family=(
        "Müller", "Schneider", "Fischer", "Weber", "Wagner", "Becker", "Schulz", "Hoffmann",
        "Schäfer", "Bauer", "Richter", "Schröder", "Neumann", "Zimmermann", "Krüger", "Hartmann",
        "Lange", "Krause", "Lehmann", "Köhler", "Herrmann", "König", "Huber", "Fuchs", "Möller",
        "Weiß", "Vogel", "Günther", "Winkler", "Lorenz", "Böhm", "Jäger", "Krämer", "Groß",
        "Seidel", "Brandt", "Ziegler", "Kühn", "Pfeiffer", "Dürr",
    ),
)

IBERIAN = Culture(
    name="Iberian",
    female=(
        "María", "Lucía", "Sofía", "Inés", "Mónica", "Begoña", "Verónica", "Raquel", "Pilar",
        "Beatriz", "Leonor", "Conceição", "Graça", "Luísa", "Fátima", "Marta", "Ximena", "Ángela",
        "Rocío", "Débora",
    ),
    male=(
        "José", "João", "Martín", "Andrés", "Sebastián", "Tomás", "Joaquín", "Álvaro", "Rubén",
        "Iñaki", "Gonçalo", "Sérgio", "Fábio", "Rogério", "Cristóvão", "Ramón", "Nicolás", "Julián",
        "Adrián", "Hernán",
    ),
    family=(
        "García", "Fernández", "González", "Rodríguez", "López", "Martínez", "Sánchez", "Pérez",
        "Gómez", "Jiménez", "Hernández", "Díaz", "Álvarez", "Muñoz", "Romero", "Gutiérrez",
        "Navarro", "Domínguez", "Vázquez", "Ramírez", "Núñez", "Ibáñez", "Peña", "Castaño",
        "Gonçalves", "Simões", "Magalhães", "Araújo", "Brandão", "Guimarães", "Loureiro", "Falcão",
        "Damião", "Estêvão", "Calderón", "Beltrán", "Quiñones", "Ordóñez", "Montaño", "Figueirôa",
    ),
)

TURKISH = Culture(
    name="Turkish",
    female=(
        "Ayşe", "Fatma", "Emine", "Hatice", "Zeynep", "Elif", "Şule", "Gülşen", "Özlem", "Büşra",
        "Çiğdem", "Nurşen", "Derya", "Sevgi", "Gökçe", "Yağmur", "İpek", "Ebru", "Dilek", "Şebnem",
    ),
    male=(
        "Mehmet", "Mustafa", "Ahmet", "Hüseyin", "Hasan", "İbrahim", "İsmail", "Ömer", "Yusuf",
        "Murat", "Emre", "Burak", "Şükrü", "Çağlar", "Oğuz", "Gökhan", "Ergün", "Doğan", "Kadir",
        "Selçuk",
    ),
    family=(
        "Yılmaz", "Kaya", "Demir", "Şahin", "Çelik", "Yıldız", "Yıldırım", "Öztürk", "Aydın",
        "Özdemir", "Arslan", "Kılıç", "Aslan", "Çetin", "Kara", "Koç", "Kurt", "Özkan", "Şimşek",
        "Polat", "Özcan", "Korkmaz", "Çakır", "Yavuz", "Acar", "Şen", "Aktaş", "Güler", "Yalçın",
        "Güneş", "Bozkurt", "Bulut", "Keskin", "Ünal", "Turan", "Gül", "Özer", "Işık", "Kaplan",
        "Avcı",
    ),
)

VIETNAMESE = Culture(
    name="Vietnamese",
    female=(
        "Thị Lan", "Thị Hương", "Thu Trang", "Ngọc Ánh", "Thanh Hằng", "Mai Anh", "Phương Linh",
        "Thùy Dung", "Kim Ngân", "Bích Ngọc", "Hồng Nhung", "Minh Châu", "Diệu Linh", "Khánh Vy",
        "Tuyết Mai", "Hải Yến", "Quỳnh Như", "Thảo Nguyên", "Ngọc Hân", "Lan Anh",
    ),
    male=(
        "Văn Minh", "Văn Hùng", "Đức Anh", "Quốc Bảo", "Minh Tuấn", "Hoàng Long", "Thành Đạt",
        "Văn Tài", "Hữu Phước", "Quang Huy", "Trọng Nghĩa", "Xuân Trường", "Đình Khoa", "Công Vinh",
        "Tiến Dũng", "Mạnh Cường", "Gia Huy", "Nhật Nam", "Bảo Khang", "Phúc Thịnh",
    ),
    family=(
        "Nguyễn", "Trần", "Lê", "Phạm", "Hoàng", "Huỳnh", "Phan", "Vũ", "Võ", "Đặng", "Bùi", "Đỗ",
        "Hồ", "Ngô", "Dương", "Lý", "Đinh", "Trịnh", "Đoàn", "Lâm", "Mai", "Tô", "Hà", "Cao",
        "Lương", "Tạ", "Châu", "Quách", "Thái", "Vương", "Từ", "Kiều", "Lưu", "Tăng", "Triệu",
        "Khúc", "La", "Âu", "Doãn", "Mạc",
    ),
    family_first=True,
)

ICELANDIC = Culture(
    name="Icelandic",
    female=(
        "Guðrún", "Anna", "Sigríður", "Kristín", "Margrét", "Helga", "Sigrún", "Ingibjörg",
        "Jóhanna", "María", "Katrín", "Ásta", "Þóra", "Elín", "Hildur", "Ragnheiður", "Bryndís",
        "Erla", "Auður", "Steinunn",
    ),
    male=(
        "Jón", "Sigurður", "Guðmundur", "Gunnar", "Ólafur", "Einar", "Kristján", "Magnús", "Stefán",
        "Björn", "Árni", "Þórður", "Helgi", "Páll", "Ragnar", "Halldór", "Bjarni", "Haraldur",
        "Egill", "Snorri",
    ),
    family=tuple(
        _icelandic(stem)
        for stem in (
            "Jóns", "Sigurðar", "Guðmundar", "Gunnars", "Ólafs", "Einars", "Kristjáns", "Magnúsar",
            "Stefáns", "Björns", "Árna", "Þórðar", "Helga", "Páls", "Ragnars", "Halldórs", "Bjarna",
            "Haralds", "Egils", "Snorra", "Karls", "Péturs", "Hauks", "Þorsteins", "Ingólfs",
            "Friðriks", "Gísla", "Sveins", "Hjalta", "Ásgeirs", "Eiríks", "Jóhanns", "Óskars",
            "Baldurs", "Davíðs", "Hermanns", "Axels", "Birgis", "Tryggva", "Örnólfs",
        )
    ),
)

CULTURES: tuple[Culture, ...] = (POLISH, GERMAN, IBERIAN, TURKISH, VIETNAMESE, ICELANDIC)
