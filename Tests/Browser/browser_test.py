"""linkout in a real browser: headless Chromium walks simulate -> landing -> checkout -> demo payment -> result ->
the app link at phone and desktop width, light and dark, English and German, a Paddle purchase through a fake
hosted checkout, checks every page (and the error pages and the operator dashboard) with axe-core's WCAG 2.2 AA rules, and saves screenshots.

Run by scripts/browser-test.sh, which starts the server. Exits 1 listing every failure; a browser that cannot start
is a failure too, never a skip.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
AXE_SCRIPT_IN_WHEEL = "axe_selenium_python/node_modules/axe-core/axe.min.js"
WAIT_SECONDS = 15


@dataclass(frozen=True)
class Viewport:
    name: str
    width: int
    height: int
    mobile: bool
    user_agent: str


# The result page tells phones (open the app) from desktops (scan a code) by User-Agent, so each width
# also sends the matching one.
VIEWPORTS = [
    Viewport(
        "phone",
        390,
        844,
        True,
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 "
        "(KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1",
    ),
    Viewport(
        "desktop",
        1280,
        800,
        False,
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36",
    ),
]
THEMES = ["light", "dark"]
LANGUAGES = {"en": "en-US,en;q=0.9", "de": "de-DE,de;q=0.9"}


class BrowserUnavailable(Exception):
    """Chromium or ChromeDriver could not start."""


class Browser:
    """One headless Chromium for the whole run, re-emulated for every combination."""

    def __init__(self, axe_script, screenshots):
        options = webdriver.ChromeOptions()
        options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        for flag in ["--headless", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800"]:
            options.add_argument(flag)
        # The fake Paddle's hosted checkout is https (linkout sends people only to https payment pages) with a
        # certificate made for the run; every other page is linkout's own, over http.
        options.accept_insecure_certs = True
        try:
            self.driver = webdriver.Chrome(
                service=Service(executable_path=os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options
            )
        except (WebDriverException, OSError) as error:
            # Selenium's message without the driver's native stack trace.
            reason = getattr(error, "msg", None) or str(error)
            raise BrowserUnavailable(reason.strip()) from error
        self.driver.set_script_timeout(30)
        self.driver.set_page_load_timeout(30)
        self.axe_script = axe_script
        self.screenshots = screenshots
        self.combination = ""
        self.viewport = None
        self.theme = None
        self.language = None

    def quit(self):
        self.driver.quit()

    def set_metrics(self, viewport, height):
        """The exact viewport: --window-size alone gives Chromium at least 500 px and subtracts its own UI."""
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": viewport.width, "height": height, "deviceScaleFactor": 1, "mobile": viewport.mobile},
        )

    def emulate(self, viewport, theme, language):
        """Width, colour scheme and Accept-Language for the pages loaded from now on."""
        self.set_metrics(viewport, viewport.height)
        self.driver.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": theme}]},
        )
        self.driver.execute_cdp_cmd(
            "Emulation.setUserAgentOverride",
            {"userAgent": viewport.user_agent, "acceptLanguage": LANGUAGES[language]},
        )
        self.viewport = viewport
        self.theme = theme
        self.language = language
        self.combination = f"{viewport.name}/{theme}/{language}"

    def verify_emulation(self):
        """The page really got the width, colour scheme and language asked for (else the checks prove nothing)."""
        width, dark, lang = self.driver.execute_script(
            "return [window.innerWidth, matchMedia('(prefers-color-scheme: dark)').matches,"
            " document.documentElement.lang];"
        )
        assert width == self.viewport.width, f"the page is {width} px wide, not {self.viewport.width}"
        assert dark == (self.theme == "dark"), f"prefers-color-scheme: dark is {dark} in the {self.theme} run"
        assert lang.startswith(self.language), f"the page's language is {lang!r}, not {self.language}"

    def open(self, url):
        self.driver.get(url)
        self.wait_loaded()

    def wait_loaded(self):
        WebDriverWait(self.driver, WAIT_SECONDS).until(
            lambda driver: driver.execute_script("return document.readyState") == "complete"
        )

    def wait_for_url(self, fragment):
        try:
            WebDriverWait(self.driver, WAIT_SECONDS).until(EC.url_contains(fragment))
        except TimeoutException:
            raise AssertionError(f"expected a URL with {fragment!r}, still at {self.driver.current_url}") from None
        self.wait_loaded()

    def find(self, css, what):
        """The first visible element matching css, waiting for it; fails naming what was looked for."""
        try:
            return WebDriverWait(self.driver, WAIT_SECONDS).until(
                lambda driver: next((e for e in driver.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()), False)
            )
        except TimeoutException:
            raise AssertionError(f"no {what} ({css}) on {self.driver.current_url}") from None

    def axe(self, page):
        """axe-core's WCAG 2.2 AA violations on the current page, as readable lines."""
        self.driver.execute_script(self.axe_script)
        result = self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}})"
            ".then(r => done({violations: r.violations}), e => done({error: String(e)}));",
            AXE_TAGS,
        )
        if "error" in result:
            return [f"{page} [{self.combination}]: axe failed: {result['error']}"]
        lines = []
        for violation in result["violations"]:
            targets = ", ".join(" ".join(node["target"]) for node in violation["nodes"][:3])
            lines.append(
                f"{page} [{self.combination}]: {violation['id']} ({violation['impact']}): {violation['help']}"
                f" -- {len(violation['nodes'])} element(s), e.g. {targets}"
            )
        return lines

    def shoot(self, name, full_page=False):
        """Saves the viewport, or the whole page by stretching the emulated screen to its height for a moment."""
        os.makedirs(self.screenshots, exist_ok=True)
        if full_page:
            height = self.driver.execute_script("return document.documentElement.scrollHeight")
            self.set_metrics(self.viewport, max(height, self.viewport.height))
        try:
            if not self.driver.save_screenshot(os.path.join(self.screenshots, name + ".png")):
                raise AssertionError(f"could not save the screenshot {name}")
        finally:
            if full_page:
                self.set_metrics(self.viewport, self.viewport.height)


class Run:
    """What the run found: failures are collected, so one report shows every broken page at once."""

    def __init__(self, browser, base_url, config):
        self.browser = browser
        self.base_url = base_url.rstrip("/")
        self.config = config
        self.failures = []
        self.pages_checked = 0

    def check(self, page, shoot_as=None, full_page=False):
        """axe on the current page, and a screenshot when asked."""
        self.pages_checked += 1
        self.failures.extend(self.browser.axe(page))
        if shoot_as:
            self.browser.shoot(shoot_as, full_page)

    def axe_self_check(self):
        """axe must find the violation in a page built to have one, or its silence on ours would prove nothing."""
        self.browser.open("data:text/html,<!doctype html><html lang=en><title>t</title><main><img src=x.png></main>")
        found = self.browser.axe("self-check")
        assert any("image-alt" in line for line in found), f"axe missed an image without alt text: {found}"

    def step(self, name, action):
        """Runs one flow; an exception fails that flow (with where it stopped) and the run goes on."""
        try:
            action()
        except (AssertionError, WebDriverException, subprocess.SubprocessError) as error:
            message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            self.failures.append(f"{name} [{self.browser.combination}]: {message}")

    def simulate(self):
        """A fresh StoreKit-shaped landing URL from `linkout simulate` (a sandbox token: demo money)."""
        output = subprocess.run(
            [os.environ["LINKOUT_BIN"], "simulate", "--url", self.base_url, "--sandbox",
             "--config", os.environ["LINKOUT_CONFIG"]],
            check=True, capture_output=True, text=True, timeout=30,
        )
        url = output.stdout.strip()
        assert url.startswith(self.base_url) and "externalPurchaseToken=" in url, f"simulate printed {url!r}"
        return url

    def purchase(self, shots):
        """simulate -> landing -> checkout -> demo payment -> result -> the app link."""
        browser = self.browser
        browser.open(self.simulate())
        browser.wait_for_url("/checkout/")
        browser.find("[name=product]", "product choice")
        browser.verify_emulation()
        self.check("checkout", shots and f"checkout-{shots}", full_page=True)
        browser.find("form[method=post] [type=submit]", "continue button on the checkout form").click()
        browser.wait_for_url("/pay/demo/")
        self.check("demo payment", shots and f"payment-demo-{shots}")
        browser.find(
            "form:has(input[name=action][value=complete]) [type=submit]", "complete button of the demo payment"
        ).click()
        browser.wait_for_url("/done")
        app = self.config["apps"][0]
        links = [f"a[href^='{app['urlScheme']}:']", f"a[href^='{app['returnURL']}']"]
        link = browser.find(", ".join(links), "link back to the app")
        href = link.get_attribute("href")
        assert href.startswith(app["urlScheme"] + ":") or href.startswith(app["returnURL"]), href
        # The browser that paid gets the redemption code on its way back into the app.
        assert "code=" in href, f"the app link {href} carries no redemption code"
        if not browser.viewport.mobile:
            WebDriverWait(browser.driver, WAIT_SECONDS).until(
                lambda driver: driver.execute_script(
                    "return [...document.images].some(i => i.src.includes('qr.svg') && i.complete"
                    " && i.naturalWidth > 0);"
                ),
                message="the desktop result page shows no QR code for the phone",
            )
        self.check("result", shots and f"result-{shots}", full_page=True)

    def paddle_purchase(self):
        """A Paddle purchase on the second server (`payments.provider: "paddle"` against Tests/Browser/fake_paddle.py):
        the checkout names Paddle as the seller of record, the button goes to the (fake) hosted checkout, whose pay
        button sends the signed `transaction.completed` to linkout and the person back to `/pay/return`, and the
        result page shows the payment made."""
        browser = self.browser
        base = os.environ["LINKOUT_PADDLE_URL"].rstrip("/")
        output = subprocess.run(
            [os.environ["LINKOUT_BIN"], "simulate", "--url", base, "--sandbox",
             "--config", os.environ["LINKOUT_PADDLE_CONFIG"]],
            check=True, capture_output=True, text=True, timeout=30,
        )
        browser.open(output.stdout.strip())
        browser.wait_for_url("/checkout/")
        # A sandbox key is test mode: the note names Paddle as the seller and says nothing is charged.
        page = browser.find("body", "checkout page").text
        assert "Paddle.com sells this on behalf of" in page, "the checkout does not name Paddle as the seller of record"
        self.check("paddle checkout", f"checkout-paddle-{browser.viewport.name}", full_page=True)
        browser.find("form[method=post] [type=submit]", "continue button on the checkout form").click()
        browser.wait_for_url("/checkout?transaction_id=txn_")
        self.check("fake paddle hosted checkout")
        browser.find("#pay", "pay button of the hosted checkout").click()
        browser.wait_for_url("/done")
        # The notification was stored before the fake sent the person back; the page may show "confirming" until
        # the background processor acted on it, and refreshes itself.
        try:
            WebDriverWait(browser.driver, WAIT_SECONDS).until(
                lambda driver: "Test payment completed" in driver.find_element(By.TAG_NAME, "body").text
                or driver.refresh()
            )
        except TimeoutException:
            raise AssertionError("the result page after Paddle's checkout never showed the payment made") from None
        self.check("paddle result", f"result-paddle-{browser.viewport.name}", full_page=True)

    def error_pages(self, shots):
        """The pages a visitor sees when something is wrong: none may lead on to a checkout."""
        for name, path in [
            ("error-invalid-token", "/?externalPurchaseToken=not-a-token&bundleId=com.example"),
            ("error-unknown-checkout", "/checkout/nope"),
            ("error-no-token", "/"),
        ]:
            self.browser.open(self.base_url + path)
            assert "/checkout/" not in self.browser.driver.current_url or path.startswith("/checkout/"), (
                f"{path} led to {self.browser.driver.current_url}"
            )
            self.browser.find("h1", f"heading of {name}")
            assert not self.browser.driver.find_elements(By.CSS_SELECTOR, "input[name=product]"), (
                f"{path} shows a product choice"
            )
            self.check(name, shots and f"{name}-{shots}")

    def dashboard(self, shots, dark_shot):
        """Login, overview with its chart, token search and a token's detail, sign-out."""
        browser = self.browser
        browser.driver.delete_all_cookies()
        browser.open(self.base_url + "/admin")
        password = browser.find("input[type=password]", "admin token field")
        self.check("admin login", shots and f"admin-login-{shots}")
        password.send_keys(os.environ["LINKOUT_ADMIN_TOKEN"])
        browser.find("form[action='/admin/login'] [type=submit]", "sign-in button").click()
        browser.find("form[action='/admin/logout'] [type=submit]", "sign-out button")
        assert browser.driver.current_url.endswith("/admin"), browser.driver.current_url
        WebDriverWait(browser.driver, WAIT_SECONDS).until(
            lambda driver: driver.execute_script(
                "const img = document.querySelector('figure img');"
                "return img !== null && img.complete && img.naturalWidth > 0;"
            ),
            message="the tokens-per-day chart did not load",
        )
        self.check("admin dashboard", shots and f"admin-dashboard-{shots}", full_page=True)
        if dark_shot:
            browser.shoot(dark_shot)
        browser.find("nav a[href='/admin/find']", "Tokens link").click()
        browser.wait_for_url("/admin/find")
        search = browser.find("input[type=search]", "token search field")
        search.send_keys("SANDBOX_")
        search.submit()
        browser.wait_for_url("q=SANDBOX_")
        rows = browser.driver.find_elements(By.CSS_SELECTOR, "table tbody tr")
        assert len(rows) >= 1, "the search for SANDBOX_ found no token"
        self.check("admin tokens", shots and f"admin-tokens-{shots}")
        browser.find("table tbody a[href^='/admin/detail?id=']", "link to a token's detail").click()
        browser.wait_for_url("/admin/detail?id=")
        heading = browser.find("h1", "detail heading").text
        assert "SANDBOX_" in heading, f"the detail page is titled {heading!r}"
        self.check("admin token detail", shots and f"admin-token-{shots}")
        browser.find("nav a[href='/admin/money']", "Money link").click()
        browser.wait_for_url("/admin/money")
        WebDriverWait(browser.driver, WAIT_SECONDS).until(
            lambda driver: driver.execute_script(
                "const imgs = document.querySelectorAll('figure img');"
                "return imgs.length === 2 && [...imgs].every(img => img.complete && img.naturalWidth > 0);"
            ),
            message="the sales and refunds charts did not load",
        )
        assert "estimate" in browser.find("main", "money page").text, "the money page does not say estimate"
        self.check("admin money", shots and f"admin-money-{shots}")
        browser.find("form[action='/admin/logout'] [type=submit]", "sign-out button").click()
        browser.find("input[type=password]", "admin token field after signing out")


def axe_script(wheel):
    with zipfile.ZipFile(wheel) as archive:
        script = archive.read(AXE_SCRIPT_IN_WHEEL).decode("utf-8")
    if "axe v4." not in script[:200]:
        raise SystemExit(f"browser-test: {wheel} does not bundle axe-core 4.x")
    return script


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--axe-wheel", required=True)
    arguments = parser.parse_args()
    # SIGTERM (a CI timeout) must still quit Chromium and ChromeDriver in the finally below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    with open(os.environ["LINKOUT_CONFIG"]) as file:
        config = json.load(file)
    try:
        browser = Browser(axe_script(arguments.axe_wheel), arguments.screenshots)
    except BrowserUnavailable as error:
        print(f"browser-test: FAILED: headless Chromium did not start: {error}", file=sys.stderr)
        return 1
    try:
        run = Run(browser, arguments.base_url, config)
        run.step("axe self-check", run.axe_self_check)
        for viewport in VIEWPORTS:
            for theme in THEMES:
                for language in LANGUAGES:
                    browser.emulate(viewport, theme, language)
                    # Screenshots of the light English pages at both widths, and of the dark German ones on the
                    # phone (the paid-order button of BGB §312j, prices in German, the dark palette).
                    if (theme, language) == ("light", "en"):
                        shots = viewport.name
                    elif (theme, language) == ("dark", "de") and viewport.mobile:
                        shots = f"{viewport.name}-de-dark"
                    else:
                        shots = None
                    run.step("purchase", lambda: run.purchase(shots))
                    run.step("error pages", lambda: run.error_pages(shots))
                    if (theme, language) == ("light", "en") and os.environ.get("LINKOUT_PADDLE_URL"):
                        run.step("paddle purchase", run.paddle_purchase)
            for theme in THEMES:
                browser.emulate(viewport, theme, "en")
                dark_shot = f"admin-dashboard-{viewport.name}-dark" if theme == "dark" else None
                run.step("dashboard", lambda: run.dashboard(viewport.name if theme == "light" else None, dark_shot))
    finally:
        browser.quit()
    elapsed = time.monotonic() - started
    if run.failures:
        print(f"browser-test: FAILED: {len(run.failures)} problem(s) on {run.pages_checked} page checks:", file=sys.stderr)
        for failure in run.failures:
            print("  " + failure, file=sys.stderr)
        return 1
    print(f"browser-test: {run.pages_checked} page checks, no axe violation, every flow completed ({elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
