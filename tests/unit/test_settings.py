"""The settings (`wikimem_platform.settings`, issue 62): every variable the platform reads, read
through one typed object; its defaults; a bad value named with what it may be, by the library and
as one line from the CLI; the instance folder resolved once (--home > $DAGSTER_HOME > ./.dagster_home)
and followed by every place that used to work it out; no other read of the environment; and the
README's table made from the model."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from cli.main import main
from resources.placement import executor_name
from sensors.registry import audit_config_path
from wikimem_platform.registry import default_registry_url, Registry
from wikimem_platform.security import files, keys
from wikimem_platform.security.users_cli import _new_password
from wikimem_platform.settings import (
    ENV_NAMES,
    get_settings,
    instance_paths,
    overridden,
    readme_with_table,
    Settings,
    SettingsError,
    settings_table,
)
from wikimem_platform.storage import default_storage_dir
from webserver.app import session_secret

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """No platform variable set, in an empty working directory."""
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


# (variable, the text set, the field, the value read)
EVERY_VARIABLE = [
    ("DAGSTER_HOME", "/srv/dagster", "dagster_home", Path("/srv/dagster")),
    ("WIKIMEM_REGISTRY_URL", "postgresql://db/wikimem", "registry_url", "postgresql://db/wikimem"),
    ("WIKIMEM_ALLOWED_MODEL_ROOTS", "/models:/more/models", "allowed_model_roots", ["/models", "/more/models"]),
    ("WIKIMEM_CACHE_DIR", "/var/cache/wikimem", "cache_dir", Path("/var/cache/wikimem")),
    ("WIKIMEM_ALLOW_GROUP_ACCESS", "1", "allow_group_access", True),
    ("WIKIMEM_INSTANCE_SECRET", "s" * 40, "instance_secret", "s" * 40),
    ("WIKIMEM_SESSION_SECRET", "c" * 40, "session_secret", "c" * 40),
    ("WIKIMEM_NEW_PASSWORD", "correct horse", "new_password", "correct horse"),
    ("WIKIMEM_EXECUTOR", "celery", "executor", "celery"),
    ("WIKIMEM_SENSOR_INTERVAL", "2", "sensor_interval", 2),
    ("WIKIMEM_AUDIT_CONFIG", "/etc/wikimem/audit.yaml", "audit_config", Path("/etc/wikimem/audit.yaml")),
    ("WIKIMEM_REAUDIT_CRON", "0 4 * * *", "reaudit_cron", "0 4 * * *"),
    ("WIKIMEM_RETENTION_CRON", "5 1 * * *", "retention_cron", "5 1 * * *"),
    ("WIKIMEM_VLLM_VENV", "/opt/vllm", "vllm_venv", Path("/opt/vllm")),
    ("HF_HUB_OFFLINE", "true", "hf_hub_offline", True),
]


def _plain(value):
    return value.get_secret_value() if hasattr(value, "get_secret_value") else value


def test_every_variable_is_a_setting_and_is_read(clean_env):
    assert sorted(name for name, *_ in EVERY_VARIABLE) == sorted(ENV_NAMES)
    for name, text, field, expected in EVERY_VARIABLE:
        assert Settings.env_name(field) == name
        clean_env.setenv(name, text)
        assert _plain(getattr(get_settings(), field)) == expected, name
        clean_env.delenv(name)
        assert _plain(getattr(get_settings(), field)) != expected, f"{name}: still read after it was unset"


def test_defaults_and_an_empty_variable_counts_as_unset(clean_env, tmp_path):
    settings = get_settings()
    assert (settings.dagster_home, settings.registry_url, settings.allowed_model_roots, settings.cache_dir) == (None, None, [], None)
    assert (settings.allow_group_access, settings.instance_secret, settings.session_secret, settings.new_password) == (
        False, None, None, None)
    assert (settings.executor, settings.sensor_interval, settings.audit_config) == ("local", 10, None)
    assert (settings.reaudit_cron, settings.retention_cron, settings.hf_hub_offline) == ("0 3 * * 1", "17 3 * * *", False)
    home = tmp_path.resolve() / ".dagster_home"
    assert instance_paths() == instance_paths(None, None, None)
    assert (instance_paths().home, instance_paths().storage, instance_paths().registry_url) == (
        home, home / "storage", f"sqlite:///{home / 'wikimem_registry.db'}")
    clean_env.setenv("WIKIMEM_SENSOR_INTERVAL", "")
    clean_env.setenv("DAGSTER_HOME", "")
    assert get_settings().sensor_interval == 10 and instance_paths().home == home


@pytest.mark.parametrize("name, text, expected", [
    ("WIKIMEM_EXECUTOR", "kubernetes", "$WIKIMEM_EXECUTOR='kubernetes': Input should be 'local', 'k8s' or 'celery'"),
    ("WIKIMEM_SENSOR_INTERVAL", "ten", "$WIKIMEM_SENSOR_INTERVAL='ten': Input should be a valid integer, unable to "
                                       "parse string as an integer (expected seconds, 1 or more)"),
    ("WIKIMEM_SENSOR_INTERVAL", "0", "$WIKIMEM_SENSOR_INTERVAL='0': Input should be greater than or equal to 1 "
                                     "(expected seconds, 1 or more)"),
    ("WIKIMEM_ALLOW_GROUP_ACCESS", "maybe", "$WIKIMEM_ALLOW_GROUP_ACCESS='maybe': Input should be a valid boolean, "
                                           "unable to interpret input (expected boolean (1/0, true/false, yes/no, on/off))"),
])
def test_a_bad_value_names_the_variable_and_what_it_may_be(clean_env, tmp_path, capsys, name, text, expected):
    clean_env.setenv(name, text)
    with pytest.raises(SettingsError) as refused:
        get_settings()
    assert str(refused.value) == expected
    # The CLI: one line, exit 2, nothing run, no traceback
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    assert main(["--registry-url", url, "models", "list"]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"error: {expected}\n" and captured.out == ""
    assert not (tmp_path / "registry.db").exists()


def test_the_instance_folder_is_home_then_dagster_home_then_the_default(clean_env, tmp_path):
    given, from_env = tmp_path / "given", tmp_path / "from-env"
    default = tmp_path.resolve() / ".dagster_home"
    assert instance_paths().home == default
    clean_env.setenv("DAGSTER_HOME", str(from_env))
    assert instance_paths().home == from_env
    assert instance_paths(home=given).home == given
    paths = instance_paths(home=given, storage=tmp_path / "elsewhere", registry_url="sqlite://")
    assert (paths.storage, paths.registry_url) == (tmp_path / "elsewhere", "sqlite://")
    clean_env.setenv("WIKIMEM_REGISTRY_URL", "sqlite:///x.db")
    assert instance_paths(home=given).registry_url == "sqlite:///x.db"
    assert instance_paths(home=given, registry_url="sqlite:///y.db").registry_url == "sqlite:///y.db"


def test_every_former_site_follows_the_one_resolution(clean_env, tmp_path):
    """The storage folder, the registry URL, the instance secret's folder, start-up's checks, the
    executor, the audit config, the users' password and the UI's session secret, each read where
    the settings say: from the environment, and from a command's own value (`overridden`)."""
    home = tmp_path / "home"
    clean_env.setenv("DAGSTER_HOME", str(home))
    assert default_storage_dir() == home / "storage"
    assert default_registry_url() == f"sqlite:///{home / 'wikimem_registry.db'}" and home.is_dir()
    assert keys.instance_home() == home and keys.secret_path() == home / "instance_secret"
    assert {home, home / "instance_secret", home / "wikimem_registry.db"} <= set(files.startup_paths())
    other = tmp_path / "other"
    with overridden(dagster_home=other):
        assert (default_storage_dir(), keys.instance_home()) == (other / "storage", other)
        assert Registry().url == f"sqlite:///{other / 'wikimem_registry.db'}"
        assert other / "wikimem_registry.db" in files.startup_paths()
    assert default_storage_dir() == home / "storage" and os.environ["DAGSTER_HOME"] == str(home)
    assert executor_name() == "local"
    clean_env.setenv("WIKIMEM_EXECUTOR", "k8s")
    assert executor_name() == "k8s"
    assert audit_config_path() is None
    (home / "wikimem_audit.yaml").write_text("ops: {}\n")
    assert audit_config_path() == home / "wikimem_audit.yaml"
    clean_env.setenv("WIKIMEM_AUDIT_CONFIG", str(tmp_path / "audit.yaml"))
    with pytest.raises(FileNotFoundError, match="WIKIMEM_AUDIT_CONFIG points to"):
        audit_config_path()
    clean_env.setenv("WIKIMEM_NEW_PASSWORD", "from the environment")
    assert _new_password() == "from the environment"
    clean_env.setenv("WIKIMEM_SESSION_SECRET", "k" * 32)
    assert session_secret(home) == b"k" * 32
    clean_env.setenv("WIKIMEM_INSTANCE_SECRET", "i" * 32)
    assert keys.instance_secret() == b"i" * 32
    clean_env.setenv("WIKIMEM_ALLOW_GROUP_ACCESS", "yes")
    assert files.group_access_allowed() is True
    clean_env.setenv("WIKIMEM_ALLOWED_MODEL_ROOTS", str(tmp_path / "models"))
    assert Registry("sqlite://").allowed_roots == [(tmp_path / "models").resolve()]
    with pytest.raises(KeyError, match="no such setting: dagsterhome"):
        with overridden(dagsterhome=other):
            pass


def test_home_is_passed_down_not_written_into_the_environment(clean_env, tmp_path, capsys):
    """`wikimem --home B` with $DAGSTER_HOME=A: the registry (and everything else) goes to B, and
    the process's environment still says A afterwards."""
    env_home, given = tmp_path / "A", tmp_path / "B"
    clean_env.setenv("DAGSTER_HOME", str(env_home))
    assert main(["--home", str(given), "models", "register", "smollm2-135m-instruct"]) == 0
    assert (given / "wikimem_registry.db").is_file() and not (env_home / "wikimem_registry.db").exists()
    assert os.environ["DAGSTER_HOME"] == str(env_home) and instance_paths().home == env_home
    capsys.readouterr()
    assert main(["--home", str(given), "models", "list", "--json"]) == 0
    assert '"key": "smollm2-135m-instruct@1"' in capsys.readouterr().out
    assert main(["models", "list"]) == 0  # $DAGSTER_HOME's registry: empty
    assert capsys.readouterr().out == "no registered model\n"
    clean_env.delenv("DAGSTER_HOME")
    assert main(["models", "list"]) == 0  # neither: ./.dagster_home
    assert (tmp_path / ".dagster_home" / "wikimem_registry.db").is_file()


LIBRARY_AND_DAGSTER_LAYER = ("wikimem_platform", "assets", "resources", "sensors", "expectations", "webserver", "cli")
ENV_READ = re.compile(r"os\.environ\.get\(|os\.getenv\(|os\.environ\[[^]]+\](?!\s*=[^=])|environ\.get\(")
# Reads that stay where they are: the settings themselves; a variable whose name a file gives
# (dagster.yaml's `{env: NAME}`, a release's --api-key-env); the CLI restoring $DAGSTER_HOME after
# a call into Dagster. lm/loading.py (WIKIMEM_CACHE_DIR) and lm/vllm_server.py (WIKIMEM_VLLM_VENV)
# are settings too, still read in lm/ (another change of issue 62 rewrites lm/ at the same time).
READS_ALLOWED = {"wikimem_platform/settings.py": 1, "wikimem_platform/security/files.py": 1, "cli/instance.py": 1,
                 "wikimem_platform/lm/endpoint_client.py": 1,
                 "wikimem_platform/lm/loading.py": 1, "wikimem_platform/lm/vllm_server.py": 1}


def test_nothing_else_reads_the_environment():
    found = {}
    for top in LIBRARY_AND_DAGSTER_LAYER:
        for path in sorted((REPO / top).rglob("*.py")):
            hits = [line for line in path.read_text().splitlines() if ENV_READ.search(line) and not line.lstrip().startswith("#")]
            if hits:
                found[str(path.relative_to(REPO))] = len(hits)
    hits = [line for line in (REPO / "definitions.py").read_text().splitlines() if ENV_READ.search(line)]
    assert not hits
    unexpected = {path: n for path, n in found.items() if n > READS_ALLOWED.get(path, 0)}
    assert unexpected == {}, "read these through wikimem_platform.settings.get_settings()"


def test_the_readme_table_is_the_settings_model():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme_with_table(readme) == readme, "regenerate it: .venv/bin/python -m wikimem_platform.settings README.md"
    table = settings_table()
    for name in ENV_NAMES:
        assert f"| `{name}` |" in table
    assert "| `WIKIMEM_EXECUTOR` | local \\| k8s \\| celery | `local` |" in table
    assert "| `WIKIMEM_SENSOR_INTERVAL` | seconds, 1 or more | 10 |" in table
