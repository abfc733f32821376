"""Save PNG screenshots of the main pages into docs/screenshots/ (shown in the README).

    DEBUG=true .venv/bin/python docs/screenshots/take.py            # every screenshot
    DEBUG=true .venv/bin/python docs/screenshots/take.py --narrow   # only the 320 px ones

Uses DATABASE_URL (or the embedded PostgreSQL), seeds the demo data, polls provider health once,
serves the site on 127.0.0.1:8765 for the duration and drives Debian's Chromium.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent
ADDR = os.environ.get("SCREENSHOT_ADDR", "127.0.0.1:8765")
#: Pages shot at 320 px wide (WCAG 1.4.10 reflow: nothing scrolls sideways but a table region).
NARROW = {"health-320.png": ("/w/acme/health/", "#health-panel"),
          "items-320.png": ("/w/acme/r/support/n/alice/items/", "#items")}
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def manage(*args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, check=True)


def main() -> None:
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("RUN_ADDR", ADDR)  # the demo's own-endpoint provider points here
    os.environ.setdefault("MEMADMIN_OUTBOUND_ALLOW", "127.0.0.1")  # as make run allows it
    manage("migrate", "--noinput", "-v0")
    manage("seed_demo")
    manage("seed_demo_stores")
    manage("seed_demo_health")
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", ADDR, "--noreload"],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://{ADDR}/accounts/login/", timeout=1)  # noqa: S310
                break
            except OSError:
                time.sleep(0.1)
        manage("scheduler", "--once")  # one poll, with the site (its own endpoint) up
        shoot(narrow_only="--narrow" in sys.argv[1:])
    finally:
        server.terminate()
        server.wait(timeout=10)


def log_in(browser, base: str, username: str, password: str):  # type: ignore[no-untyped-def]
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(base + "/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(base + "/")
    return page


def save(page, name: str) -> None:  # type: ignore[no-untyped-def]
    page.screenshot(path=str(OUT / name), full_page=False)
    print("saved", OUT / name)


#: An agent's write landing while someone edits (run in another process, as an agent would).
AGENT_WRITE = """
from memadmin.memory.models import MemoryItem
from memadmin.providers.registry import namespace_scope, provider_for
item = MemoryItem.objects.select_related("namespace__resource__provider").get(pk="{item_id}")
provider_for(item.namespace.resource.provider).update_item(
    str(item.pk), item.content + "\\n- Escalations now go to the on-call lead.", "replace",
    expected_revision=item.revision, operation_id="screenshot-agent-write", actor="agent:demo",
    scope=namespace_scope(item.namespace), deadline=5)
"""


def shoot(*, narrow_only: bool = False) -> None:
    from playwright.sync_api import sync_playwright

    password = os.environ.get("MEMADMIN_DEMO_PASSWORD", "demo")
    base = f"http://{ADDR}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = log_in(browser, base, "admin", password)
        page.set_viewport_size({"width": 320, "height": 900})
        for name, (path, anchor) in NARROW.items():
            page.goto(base + path)
            page.locator(anchor).evaluate(
                "el => { el.scrollIntoView({block: 'start'}); window.scrollBy(0, -40); }")
            save(page, name)
        page.set_viewport_size({"width": 1280, "height": 900})
        if narrow_only:
            browser.close()
            return
        shots = {
            "workspaces.png": "/",
            "dashboard.png": "/w/acme/",
            "health.png": "/w/acme/health/",
            "provider-history.png": "/w/acme/health/providers/staging-vectors/",
            "maintenance.png": "/w/acme/health/maintenance/",
            "items.png": "/w/acme/r/support/n/alice/items/",
            "search.png": "/w/acme/search/?q=customer",
            "quarantine.png": "/w/acme/quarantine/",
        }
        for name, path in shots.items():
            page.goto(base + path)
            save(page, name)

        # The editor with a conflict: an agent writes while the page is open.
        page.goto(base + "/w/acme/r/support/n/alice/items/?tier=lessons")
        page.locator("#item-rows a").first.click()
        item_id = page.url.rstrip("/").rsplit("/", 1)[-1]
        page.get_by_role("link", name="Edit").click()
        page.get_by_role("textbox", name="Content").fill(
            "Lessons learned\n- Confirm the customer's time zone before promising a call-back.")
        manage("shell", "-c", AGENT_WRITE.format(item_id=item_id))
        page.get_by_role("button", name="Save").click()
        page.locator("#their-version").wait_for()
        save(page, "editor-conflict.png")

        # An erasure: one compliance user asks, another approves, the worker runs it.
        asker = log_in(browser, base, "compliance", password)
        asker.goto(base + "/w/acme/requests/new/")
        asker.get_by_label("Erasure (Art. 17)").check()
        asker.get_by_label("Data-subject id").fill("user:marco.rossi@example.com")
        asker.get_by_label("Reason / legal basis").fill(
            "Subject's e-mail of 28 Nov, identity checked (ticket GDPR-311)")
        asker.get_by_role("button", name="Create request").click()
        asker.get_by_role("button", name="Preview counts").click()
        asker.get_by_role("button", name="Submit for approval").click()
        approver = log_in(browser, base, "compliance2", password)
        approver.goto(asker.url)
        approver.get_by_role("button", name="Approve").click()
        manage("db_worker", "--batch", "--no-startup-delay", "--no-reload")
        approver.reload()
        approver.locator("#request-state").wait_for()
        save(approver, "erasure.png")
        browser.close()


if __name__ == "__main__":
    main()
