"""Django: the public-ID keys never appear in an error report (issue 60, finding 9).

``shardid.django.public_ids()`` read the keys into a local variable, shown with every frame's
locals on Django's DEBUG page, by ``ExceptionReporter`` and by Sentry. Each case here raises an
exception through it with the key in reach (a prefix or encoding the core refuses, a layout of
the wrong type, a key of the wrong type), renders Django's report (HTML and text, under DEBUG and
not, as the DEBUG page and the error e-mails do) and walks the traceback's frames as Sentry does:
the key is in none of them, while a marker in the caller's frame is, so the reports do show locals.
"""

from __future__ import annotations

import subprocess
import sys

KEY = "7f3a9c0e5b1d4f2a8c6e0b9d3f5a7c1e"

SCRIPT = """
import sys
import django
from django.conf import settings

# The key is only in settings (whose report hides it by its name) and in main()'s frame, which
# no traceback here passes through: what the reports show of it comes from shardid's frames.
settings.configure(
    DEBUG=sys.argv[2] == "debug",
    SHARDID_PUBLIC_ID_KEYS=sys.argv.pop(1),
    INSTALLED_APPS=[],
    ALLOWED_HOSTS=["*"],
    SECRET_KEY="not-the-public-id-key",
    ROOT_URLCONF=__name__,
)
urlpatterns = []
django.setup()
from django.test import RequestFactory
from django.views.debug import ExceptionReporter
from shardid.django import public_ids

def bytes_key():
    settings.SHARDID_PUBLIC_ID_KEYS = settings.SHARDID_PUBLIC_ID_KEYS.encode()
    try:
        public_ids("note")
    finally:
        settings.SHARDID_PUBLIC_ID_KEYS = settings.SHARDID_PUBLIC_ID_KEYS.decode()

CASES = {
    "a prefix the core refuses": lambda: public_ids("Not A Prefix"),
    "an encoding the core refuses": lambda: public_ids("note", "base64"),
    "a layout of the wrong type": lambda: public_ids("note", layout="instagram"),
    "a key of the wrong type": bytes_key,
}

def raised(name):
    marker = "caller-marker-" + name.replace(" ", "-")  # a local the reports must show
    try:
        CASES[name]()
    except Exception:
        return sys.exc_info()
    return None

def main():
    forms = []
    for key in (settings.SHARDID_PUBLIC_ID_KEYS,):
        forms += [key, key.upper(), repr(key.encode()), repr(bytes.fromhex(key))]
    request = RequestFactory().get("/notes/")
    failures = []
    for name in CASES:
        marker = "caller-marker-" + name.replace(" ", "-")
        got = raised(name)
        if got is None:
            failures.append(f"{name}: nothing raised")
            continue
        reports = {
            "html": ExceptionReporter(request, *got).get_traceback_html(),
            "text": ExceptionReporter(request, *got).get_traceback_text(),
            "email": ExceptionReporter(request, *got, is_email=True).get_traceback_text(),
        }
        # What Sentry captures: every frame's local variables, by repr.
        frames, t = [], got[2]
        while t is not None:
            frames.append(" ".join(f"{k}={v!r}" for k, v in t.tb_frame.f_locals.items()))
            t = t.tb_next
        reports["frame locals"] = "\\n".join(frames)
        for what, text in reports.items():
            if any(form in text for form in forms):
                failures.append(f"{name}: the key is in the {what}")
        if marker not in reports["frame locals"]:
            failures.append(f"{name}: the caller's locals are not in the frames walked")
        if settings.DEBUG and marker not in reports["html"]:
            failures.append(f"{name}: the DEBUG page shows no locals, so this test could not fail")
    print("\\n".join(failures) or "ok")

main()
"""


def check(mode: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, KEY, mode], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok", done.stdout


def test_the_debug_page_and_sentry_never_show_the_public_id_key() -> None:
    check("debug")


def test_error_reports_and_emails_never_show_the_public_id_key() -> None:
    check("production")
