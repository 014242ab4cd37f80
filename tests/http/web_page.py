#!/usr/bin/python3
"""The chat page at GET / in a real browser: Debian's headless Chromium, driven by Selenium,
against a real `exspec serve` of the demo pair with an API key. The page asks for the key once;
a message sent with Enter streams back as tokens shaded by origin, as many as the server's
usage.completion_tokens; Escape stops a long answer and the server counts the cancel
(/metrics); a JSON Schema gives an answer the page and python3-jsonschema both find valid; the
plots draw points from /metrics; the conversation survives a reload; a phone-sized window still
shows the composer. A screenshot of each step goes to WORK_DIR.

  web_page.py EXSPEC_BINARY DEMO_DIR WORK_DIR"""
import json, os, re, shutil, subprocess, sys, time, urllib.request

import jsonschema
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

KEY = "page-test-key"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                           "mood": {"enum": ["glad", "sad", "calm"]}},
          "required": ["name", "mood"], "additionalProperties": False}


def start_server(exspec, demo, work):
    log = open(os.path.join(work, "serve.err"), "w+")
    proc = subprocess.Popen([exspec, "serve", "--model", f"{demo}/target", "--draft", f"{demo}/draft",
                             "--served-model-name", "demo", "--api-key", KEY, "--port", "0",
                             # K fixed: the default (auto) picks K from the costs it measures, and
                             # on a busy machine it may draft nothing in a short test.
                             "--draft-tokens", "3"],
                            stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.time() + 60
    while time.time() < deadline:
        log.seek(0)
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", log.read())
        if m:
            port = int(m.group(1))
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5).status == 200:
                    return proc, port
            except OSError:
                pass
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    log.seek(0)
    sys.exit("the server did not get ready:\n" + log.read())


def metric(port, name):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def browser(width, height):
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
              f"--window-size={width},{height}"):
        o.add_argument(a)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)


class Page:
    def __init__(self, driver, work):
        self.d, self.work, self.shots = driver, work, 0

    def shot(self, name):
        self.shots += 1
        self.d.save_screenshot(os.path.join(self.work, f"{self.shots:02d}-{name}.png"))

    def wait(self, what, timeout=120):
        # The page redraws a conversation when an answer ends: an element found just before may
        # be gone by the time it is read, and is found again at the next poll.
        return WebDriverWait(self.d, timeout, poll_frequency=0.1,
                             ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: what())

    def field(self, id_, value):
        e = self.d.find_element(By.ID, id_)
        e.clear()
        e.send_keys(str(value))
        self.d.execute_script("arguments[0].dispatchEvent(new Event('change'))", e)

    def answers(self):
        return self.d.find_elements(By.CSS_SELECTOR, "#log .msg.assistant")

    def say(self, text):
        """Types a message and sends it with Enter; returns the count of answers before it."""
        before = len(self.answers())
        box = self.d.find_element(By.ID, "prompt")
        box.send_keys(text)
        box.send_keys(Keys.ENTER)
        return before

    def finished(self, before):
        """The answer after `before` ones, once its end line is drawn (the page re-renders then)."""
        self.wait(lambda: len(self.answers()) > before and self.answers()[before].find_elements(By.CLASS_NAME, "endline"))
        return self.answers()[before]


def check(cond, what):
    if not cond:
        sys.exit("FAILED: " + what)
    print("ok:", what)


def chat(p, port):
    p.field("temperature", 0)
    p.field("max_tokens", 48)
    tokens_before = metric(port, "exspec_generation_tokens_total")
    a = p.finished(p.say("Hello! Who are you?"))
    spans = a.find_elements(By.CSS_SELECTOR, ".tok")
    end = a.find_element(By.CLASS_NAME, "endline")
    usage = int(end.get_attribute("data-completion-tokens"))
    check(len(spans) == usage and usage > 0, f"{len(spans)} shaded tokens = usage.completion_tokens {usage}")
    # The server's own count of this request's tokens, independent of what the page says.
    check(metric(port, "exspec_generation_tokens_total") - tokens_before == usage, "the server generated as many")
    check("accepted" in end.text and "tok/s" in end.text, "end line: " + end.text)
    p.shot("answer")
    # Regenerate: the last answer again, in its place (greedy: the same text).
    text = a.find_element(By.CLASS_NAME, "text").get_attribute("textContent")
    n = len(p.answers())
    tokens_before = metric(port, "exspec_generation_tokens_total")
    p.d.find_element(By.ID, "regen").click()
    p.wait(lambda: metric(port, "exspec_generation_tokens_total") > tokens_before)
    again = p.finished(n - 1)
    check(len(p.answers()) == n and again.find_element(By.CLASS_NAME, "text").get_attribute("textContent") == text,
          "Regenerate answers again in its place")
    # Shift+Enter adds a line; it sends nothing.
    box = p.d.find_element(By.ID, "prompt")
    box.send_keys("one")
    ActionChains(p.d).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).send_keys("two").perform()
    value = box.get_attribute("value")
    check(value == "one\ntwo" and len(p.answers()) == n, f"Shift+Enter adds a line: {value!r}")
    box.clear()


def stop_long(p, port):
    p.field("max_tokens", 500)
    for attempt, prompt in enumerate(["Tell me a very long story about the kings of old.",
                                      "Write many verses about the sea and the land.",
                                      "List every word you know."]):
        cancelled = metric(port, "exspec_sequences_cancelled_total")
        before = p.say(prompt)
        # 30 tokens in, or over by itself (the end line is drawn then).
        p.wait(lambda: len(p.answers()) > before and (len(p.answers()[before].find_elements(By.CSS_SELECTOR, ".tok")) >= 30 or
                                                       p.answers()[before].find_elements(By.CLASS_NAME, "endline")))
        p.d.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
        end = p.finished(before).find_element(By.CLASS_NAME, "endline")
        if "finish: stopped" not in end.text:
            print(f"note: answer {attempt} ended by itself before Escape ({end.text}); another prompt")
            continue
        p.wait(lambda: metric(port, "exspec_sequences_cancelled_total") > cancelled, timeout=20)
        check(True, "Escape stopped the answer and the server cancelled its sequence (/metrics)")
        p.shot("stopped")
        return
    check(False, "no answer lasted long enough to be stopped")


def schema(p):
    p.field("max_tokens", 120)
    p.field("schema", json.dumps(SCHEMA))
    a = p.finished(p.say("Describe a person."))
    v = a.find_element(By.CLASS_NAME, "validation")
    check("ok" in v.get_attribute("class").split(), "the page validated the answer: " + v.text)
    text = "".join(s.get_attribute("textContent") for s in a.find_elements(By.CSS_SELECTOR, ".tok"))
    jsonschema.validate(json.loads(text), SCHEMA)  # raises when it does not validate
    check(True, "python3-jsonschema validates it too: " + text)
    origins = [s.get_attribute("data-origin") for s in a.find_elements(By.CSS_SELECTOR, ".tok")]
    check("grammar" in origins, "some tokens were forced by the grammar")
    p.shot("schema")
    p.field("schema", "")


def plots(p):
    for name in ("tps", "acceptance", "kv", "queue", "preemptions", "k"):
        el = p.d.find_element(By.ID, "plot-" + name)
        p.wait(lambda: int(el.get_attribute("data-points") or 0) >= 3, timeout=20)
        pts = el.find_element(By.TAG_NAME, "polyline").get_attribute("points").split()
        check(len(pts) >= 3, f"plot {name} draws {len(pts)} points")
    p.d.execute_script("document.getElementById('plot-k').scrollIntoView()")
    p.shot("plots")


def main():
    exspec, demo, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # Chromium leaves its singleton socket's directory in TMPDIR: here, not in /tmp.
    os.makedirs(os.path.join(work, "tmp"))
    os.environ["TMPDIR"] = os.path.join(work, "tmp")
    t0 = time.time()
    server, port = start_server(exspec, demo, work)
    driver = None
    try:
        driver = browser(1280, 900)
        p = Page(driver, work)
        driver.get(f"http://127.0.0.1:{port}/")
        p.wait(lambda: driver.find_element(By.ID, "keybox").is_displayed(), timeout=20)
        p.shot("asks-for-key")
        driver.find_element(By.ID, "key").send_keys(KEY + Keys.ENTER)
        p.wait(lambda: "demo" in driver.find_element(By.ID, "model").text, timeout=20)
        check(driver.current_url == f"http://127.0.0.1:{port}/", "the key is in no URL: " + driver.current_url)
        chat(p, port)
        stop_long(p, port)
        schema(p)
        plots(p)
        # The demo pair's drafts are accepted (about a third of them) in these greedy answers.
        origins = {s.get_attribute("data-origin") for s in driver.find_elements(By.CSS_SELECTOR, "#log .tok")}
        check({"draft", "target", "grammar"} <= origins, f"tokens shaded by origin: {sorted(origins)}")
        kept = len(p.answers())
        driver.refresh()
        p.wait(lambda: len(p.answers()) == kept, timeout=20)
        check(not driver.find_element(By.ID, "keybox").is_displayed(), "after a reload: the conversation is kept, no second key prompt")
        driver.set_window_size(390, 844)
        time.sleep(0.5)
        check(driver.find_element(By.ID, "prompt").is_displayed() and driver.find_element(By.ID, "menu").is_displayed(),
              "phone-sized: the composer and the menu button show")
        p.shot("phone")
    finally:
        if driver:
            driver.quit()
        server.terminate()
        server.wait(timeout=30)
    print(f"web page test: {time.time() - t0:.1f} s, screenshots in {work}")


if __name__ == "__main__":
    main()
