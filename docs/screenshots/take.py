"""Save PNG screenshots of the main pages into docs/screenshots/ (shown in the README).

    DEBUG=true .venv/bin/python docs/screenshots/take.py

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
ADDR = "127.0.0.1:8765"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def manage(*args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, check=True)


def main() -> None:
    os.environ.setdefault("DEBUG", "true")
    manage("migrate", "--noinput", "-v0")
    manage("seed_demo")
    manage("scheduler", "--once")
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", ADDR, "--noreload"],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://{ADDR}/accounts/login/", timeout=1)  # noqa: S310
                break
            except OSError:
                time.sleep(0.1)
        shoot()
    finally:
        server.terminate()
        server.wait(timeout=10)


def shoot() -> None:
    from playwright.sync_api import sync_playwright

    password = os.environ.get("MEMADMIN_DEMO_PASSWORD", "demo")
    base = f"http://{ADDR}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(base + "/accounts/login/")
        page.get_by_label("Username").fill("admin")
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(base + "/")
        shots = {
            "workspaces.png": "/",
            "dashboard.png": "/w/acme/",
            "health.png": "/w/acme/health/",
            "items.png": "/w/acme/r/support/n/alice/items/",
            "search.png": "/w/acme/search/?q=customer",
        }
        for name, path in shots.items():
            page.goto(base + path)
            page.screenshot(path=str(OUT / name), full_page=False)
            print("saved", OUT / name)
        browser.close()


if __name__ == "__main__":
    main()
