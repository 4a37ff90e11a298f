"""Rendering reads nothing but the page (issue 61, deliverable 5): a probe page that frames a local
secret file and loads a remote image, a stylesheet and a script fetch from a local beacon prints to
a PDF without the secret, and the beacon is never called; every HTML page the platform writes
carries a Content-Security-Policy that allows nothing beyond the page's own inline styles (and
scripts, for the plots)."""

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.unit.subject_requests.test_letter import _document
from wikimem_platform.reports import compliance as reports
from wikimem_platform.reports.page_policy import PAGE_CSP, SCRIPTED_PAGE_CSP
from wikimem_platform.subject_requests import inquiry
from wikimem_platform.subject_requests.letter import annex_html, answer_html, render_pdf

SECRET = "WIKIMEM-LOCAL-SECRET-7f3a"
VISIBLE = "WIKIMEM-PROBE-VISIBLE"
CSP_META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">')
NO_CHROMIUM = "no Chromium binary: apt-get install -y chromium"


@pytest.fixture
def beacon():
    """A local HTTP server that counts every request it gets (the paths, for the failure message)."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the http.server name
            hits.append(self.path)
            self.send_response(200)
            self.send_header("content-type", "image/gif")
            self.end_headers()
            self.wfile.write(b"GIF89a")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.skipif(reports.find_chromium() is None, reason=NO_CHROMIUM)
def test_a_probe_page_prints_without_local_files_and_calls_no_beacon(tmp_path, beacon):
    from pypdf import PdfReader

    url, hits = beacon
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET}\n")
    probe = tmp_path / "probe.html"  # no policy of its own: the renderer must hold it to one
    probe.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<link rel='stylesheet' href='{url}/style.css'></head><body><p>{VISIBLE}</p>"
        f"<iframe src='{secret.as_uri()}' width='600' height='100'></iframe>"
        f"<iframe src='secret.txt' width='600' height='100'></iframe>"  # relative to the page's folder
        f"<object data='{secret.as_uri()}' type='text/plain' width='600' height='100'></object>"
        f"<img src='{url}/beacon.gif' width='10' height='10'>"
        f"<script>fetch('{url}/fetch').catch(() => null)</script></body></html>", encoding="utf-8")
    pdf = render_pdf(probe, tmp_path / "probe.pdf", timeout=60)
    data = pdf.read_bytes()
    text = "".join(page.extract_text() or "" for page in PdfReader(pdf).pages)
    assert VISIBLE in text  # the page itself printed, and its text is readable here
    assert SECRET not in text and SECRET.encode() not in data, "the PDF holds a local file's content"
    assert hits == [], f"the beacon was called: {hits}"
    from urllib.request import urlopen

    with urlopen(f"{url}/check", timeout=5) as response:  # the beacon itself counts
        assert response.status == 200
    assert hits == ["/check"]


@pytest.mark.skipif(reports.find_chromium() is None, reason=NO_CHROMIUM)
def test_without_the_policy_chromium_still_calls_no_beacon(tmp_path, beacon, monkeypatch):
    """Defence in depth: with the printed copy's policy taken away, the offline flags alone still
    stop every request (loopback included), though a framed local file then prints."""
    from pypdf import PdfReader

    from wikimem_platform.subject_requests import letter

    url, hits = beacon
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET}\n")
    probe = tmp_path / "probe.html"
    probe.write_text(f"<html><head></head><body><p>{VISIBLE}</p><iframe src='{secret.as_uri()}'></iframe>"
                     f"<img src='{url}/beacon.gif'><script>fetch('{url}/fetch')</script></body></html>", encoding="utf-8")
    monkeypatch.setattr(letter.reports, "with_csp", lambda page, policy=None: page, raising=False)
    pdf = render_pdf(probe, tmp_path / "probe.pdf", timeout=60)
    text = "".join(page.extract_text() or "" for page in PdfReader(pdf).pages)
    assert VISIBLE in text and SECRET in text  # no policy: the frame printed, so the check above is not vacuous
    assert hits == [], f"the beacon was called: {hits}"


def _policy(page: str) -> str:
    found = CSP_META.findall(page)
    assert found, "no Content-Security-Policy meta"
    assert page.index(found[0]) < page.index("<title") if "<title" in page else True  # before what it must cover
    return found[0]


def test_the_letter_the_annex_and_the_inquiry_allow_nothing_but_their_own_styles():
    document = _document()
    answer = {"query": "Ilse Marwitz", "subjects": [], "known_but_not_audited": [], "models": [],
              "generated_at": "2026-11-02T00:00:00+00:00", "criterion": "strict", "cue_tau": 0.5}
    for name, page in (("letter", answer_html(document)), ("annex", annex_html(document)),
                       ("inquiry", inquiry.inquiry_html(answer))):
        assert _policy(page) == PAGE_CSP, name
        assert "<script" not in page, name  # so no script-src is needed
    assert "script-src" not in PAGE_CSP and "default-src 'none'" in PAGE_CSP


def test_the_reports_allow_only_their_inline_plotly_besides_their_styles(tmp_path):
    from tests.unit.reports.test_compliance import write_sample_report
    from tests.unit.reports.test_across_models import PER_RELEASE, RELEASES
    from wikimem_platform.reports import across_models as am

    report = write_sample_report(tmp_path).html.read_text()
    cross = am.render_html(am.AcrossModelsReport(am.table1(PER_RELEASE, RELEASES), am.property_rates(PER_RELEASE, RELEASES)))
    for name, page in (("compliance report", report), ("cross-model report", cross)):
        assert _policy(page) == SCRIPTED_PAGE_CSP, name
        assert re.search(r"<script[^>]+src=", page) is None, name  # plotly.js inlined, nothing loaded
    assert SCRIPTED_PAGE_CSP == PAGE_CSP + "; script-src 'unsafe-inline'"


def test_the_plot_pages_of_the_assets_carry_the_policy(tmp_path):
    import plotly.graph_objects as go

    from assets.metadata import plot_path

    class Context:  # what plot_path reads of an asset's context
        has_partition_key, partition_key = True, "acme/chat@3"

        class instance:
            @staticmethod
            def storage_directory():
                return str(tmp_path)

    page = open(plot_path(Context(), "plots", "scores", go.Figure(go.Bar(y=[1, 2])))).read()
    assert _policy(page) == SCRIPTED_PAGE_CSP
    assert re.search(r"<script[^>]+src=", page) is None


@pytest.mark.skipif(reports.find_chromium() is None, reason=NO_CHROMIUM)
def test_the_page_check_still_measures_a_letter_whose_policy_allows_no_script(tmp_path):
    from wikimem_platform.subject_requests.letter import write_answer

    files = write_answer(_document(), tmp_path / "dsr-1")
    assert _policy(files.html.read_text()) == PAGE_CSP
    check = reports.check_page(files.html, width=1280)
    assert check.fits and "Ilse Marwitz" in check.text
    assert sorted(p.name for p in files.html.parent.iterdir()) == ["annex.html", "answer.html", "answer.json"]
