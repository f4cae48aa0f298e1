"""A team in a real browser (Playwright, Chromium, `footnote serve` with API keys): the library
says who owns each source and who it is shared with, shows a delete button only where the
user may delete, shares an upload with a group, lists the one set of accepted formats and says
"1 page"; in Chinese its headers stay on one line. The review page refuses a sign-off while a sampled claim
is unopened, naming the claim, and its sample card keeps its links inside it."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("playwright.sync_api", reason="pip install playwright pytest-playwright")
from conftest import serving  # type: ignore[import-not-found]
from playwright.sync_api import Page, expect

from footnote.eval.fixture_web import FixtureWeb
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration
Q = "How large is Veldmark's battery recycling market, and how fast is it expected to grow?"


def _call(url: str, method: str = "GET", body: Any = None, key: str = "") -> Any:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json", **({"X-API-Key": key} if key else {})}
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        raw = r.read()
    return json.loads(raw) if raw else None


def _upload(url: str, key: str, name: str, text: str, groups: str = "") -> dict[str, Any]:
    b = "----footnote-team"
    parts = [f'--{b}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
             f"Content-Type: text/markdown\r\n\r\n{text}\r\n"]  # fmt: skip
    if groups:
        parts.append(
            f'--{b}\r\nContent-Disposition: form-data; name="acl_groups"\r\n\r\n{groups}\r\n'
        )
    body = ("".join(parts) + f"--{b}--\r\n").encode()
    req = urllib.request.Request(f"{url}/v1/sources", data=body, method="POST", headers={
        "Content-Type": f"multipart/form-data; boundary={b}", "X-API-Key": key})  # fmt: skip
    with urllib.request.urlopen(req, timeout=60) as r:
        source: dict[str, Any] = json.loads(r.read())
    deadline = time.monotonic() + 120
    while source["status"] == "processing" and time.monotonic() < deadline:
        time.sleep(0.4)
        source = _call(f"{url}/v1/sources/{source['id']}", key=key)
    assert source["status"] == "ready", source
    return source


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    root = tmp_path_factory.mktemp("team-web")
    ws = Workspace.open(root / "ws")
    keys = {"alice": ws.auth.add_key("alice", ("lab",)), "bob": ws.auth.add_key("bob", ("lab",))}
    ws.close()
    with serving(root / "ws", root / "server.log") as url:
        _upload(url, keys["alice"], "lab-notes.md", "# Lab notes\n\nShared with the lab.\n", "lab")
        _upload(
            url, keys["alice"], "diary.md", "# Alice's diary\n\nPrivate to Alice.\n", "user:alice"
        )
        _upload(url, keys["bob"], "bob-draft.md", "# Bob's draft\n\nPrivate to Bob.\n", "user:bob")
        yield url, keys


def _sign_in(page: Page, url: str, key: str) -> None:
    page.goto(f"{url}/#/library")
    page.locator("#api-key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Library", level=1)).to_be_visible()


def test_the_library_shows_owners_sharing_and_only_deletable_delete_buttons(
    page: Page, team: tuple[str, dict[str, str]], shots: Path, tmp_path: Path
) -> None:
    url, keys = team
    _sign_in(page, url, keys["bob"])
    rows = page.locator("table.sources tbody tr")
    expect(rows).to_have_count(2)  # Alice's diary stays private
    shared = page.locator("tr", has_text="Lab notes")
    expect(shared.locator("td.access")).to_contain_text("owner: alice")
    expect(shared.locator("td.access")).to_contain_text("shared with lab")
    expect(shared.get_by_role("button", name="Delete: Lab notes")).to_have_count(0)
    mine = page.locator("tr", has_text="Bob's draft")
    expect(mine.locator("td.access")).to_have_text("only bob")
    expect(mine.get_by_role("button", name="Delete: Bob's draft")).to_have_count(1)
    # the one list of formats: the picker's accept list and the hint
    hint = page.locator("#formats-hint")
    expect(hint).to_contain_text("Word (.docx)")
    expect(hint).to_contain_text("LaTeX (.tex)")
    accept = page.locator("#file-input").get_attribute("accept") or ""
    assert {".pdf", ".docx", ".pptx", ".xlsx", ".epub", ".tex"} <= set(accept.split(","))
    png = tmp_path / "figure.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n")
    page.locator("#file-input").set_input_files(png)
    failed = page.locator(".upload-item[data-file='figure.png'] .upload-state")
    expect(failed).to_contain_text("EPUB (.epub)")
    # share an upload with a group from the web
    notes = tmp_path / "group-notes.md"
    notes.write_text("# Group notes\n\nFor the whole lab.\n")
    page.locator("#share-groups").fill("lab")
    page.locator("#file-input").set_input_files(notes)
    row = page.locator("tr", has_text="Group notes")
    expect(row.locator("td.access")).to_contain_text("shared with lab", timeout=60_000)
    page.screenshot(path=str(shots / "library-access.png"))
    seen_by_alice = {s["title"]: s for s in _call(f"{url}/v1/sources", key=keys["alice"])}
    assert seen_by_alice["Group notes"]["owner"] == "bob"
    assert not seen_by_alice["Group notes"]["can_delete"]
    # a one-page source says "1 page"
    page.get_by_role("link", name="Bob's draft").click()
    meta = page.locator(".source-page .meta")
    expect(meta).to_contain_text("1 page ·")
    expect(meta).not_to_contain_text("1 pages")
    page.go_back()
    expect(rows).to_have_count(3)
    # in Chinese the column headers stay on one line each
    page.locator(".lang-select").select_option("zh")
    expect(page.get_by_role("columnheader", name="权限")).to_be_visible()
    heights = page.locator("table.sources th").evaluate_all(
        "ths => ths.map(th => [th.textContent, th.getBoundingClientRect().height])"
    )
    line = page.locator("table.sources th").first.evaluate(
        "th => parseFloat(getComputedStyle(th).lineHeight) || 20"
    )
    paddings = 20  # 10px above and below
    assert all(h <= line * 1.5 + paddings for _, h in heights), heights
    page.screenshot(path=str(shots / "library-chinese.png"))


@pytest.fixture(scope="module")
def review_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    root = tmp_path_factory.mktemp("team-review")
    web = FixtureWeb()
    (root / "ws").mkdir()
    (root / "ws" / "config.toml").write_text(
        f'[research]\nsearch_url = "searxng+{web.base}"\nallowed_domains = ["example"]\n'
        'allow_loopback = true\nresolve = {"*.example" = "127.0.0.1"}\nwriter = "extractive"\n'
        'select = "rules"\nreview_sample_rate = 1.0\n[models.judge]\nurl = ""\n',
        encoding="utf-8",
    )
    try:
        with serving(root / "ws", root / "server.log") as url:
            run = _call(f"{url}/v1/research", "POST", {"question": Q})
            items = run["outline"]["items"]  # every chapter: some claims carry no key figure
            _call(f"{url}/v1/research/{run['id']}/start", "POST", {"outline": {"items": items}})
            deadline = time.monotonic() + 180
            while _call(f"{url}/v1/research/{run['id']}")["state"] not in (
                "completed",
                "wrapped_up",
            ):
                assert time.monotonic() < deadline, "the research run did not finish"
                time.sleep(0.3)
            yield url, run["id"]
    finally:
        web.stop()


def test_sign_off_waits_for_every_sampled_claim_and_names_it(
    page: Page, review_run: tuple[str, str], shots: Path
) -> None:
    url, run_id = review_run
    view = _call(f"{url}/v1/research/{run_id}/review")
    claims = [c for s in view["sections"] for c in s["claims"]]
    sampled = [c for c in claims if c["sampled"]]
    assert sampled
    for c in claims:  # every key figure ticked, every conflict resolved: half a review
        if c["key_number"]:
            _call(f"{url}/v1/research/{run_id}/review/ticks/{c['id']}", "POST", {})
    for conflict in view["conflicts"]:
        _call(f"{url}/v1/research/{run_id}/review/conflicts/{conflict['id']}", "POST",
              {"resolution": "keep_both"})  # fmt: skip
    page.goto(f"{url}/#/review/{run_id}")
    sign = page.locator("#sign-off")
    expect(sign).to_be_disabled()
    # decide every origin the merge left undecided (sign-off waits for them too)
    origins = page.locator(".review-origin")
    for n in range(origins.count()):
        box = origins.nth(n)
        box.get_by_label("Reason").fill("Separate surveys.")
        box.get_by_role("button", name="Independent").click()
        expect(box.locator(".origin-decided")).to_have_text("decided: independent")
    blockers = page.locator(".review-sign .blockers li")
    expect(blockers.first).to_contain_text("sampled claim not opened")
    expect(blockers.first).to_contain_text(sampled[0]["text"][:40])
    for c in claims:
        expect(page.locator(".review-sign")).not_to_contain_text(c["id"])
    # the sample card's links stay inside the card
    card = page.locator(".review-sample")
    box = card.bounding_box()
    assert box is not None
    for link in card.locator(".page-link").all():
        lb = link.bounding_box()
        assert lb is not None and lb["x"] + lb["width"] <= box["x"] + box["width"] + 1, (lb, box)
    page.screenshot(path=str(shots / "review-blocked-sample.png"))
    # a claim opened from the sample card counts; once all are opened the sign-off goes through
    links = card.locator(".page-link")
    for n in range(links.count()):
        links.nth(n).click()
    expect(sign).to_be_enabled()
    sign.click()
    expect(page.locator("#signed-info")).to_contain_text("Signed off by local")
    signed = _call(f"{url}/v1/research/{run_id}/review")["review"]["coverage"]
    assert signed["sampled_seen"] == signed["sampled"] == len(sampled)
    # the Chinese UI names coverage and report kinds in Chinese
    page.locator(".lang-select").select_option("zh")
    expect(page.get_by_role("heading", name=f"审阅: {Q}")).to_be_visible()
    chips = page.locator(".review-section h2 .chip")
    expect(chips.first).to_be_visible()
    for text in chips.all_inner_texts():
        assert text in ("已覆盖", "未覆盖", "有冲突"), text
    page.goto(f"{url}/#/research")
    options = page.locator("#research-template option").all_inner_texts()
    assert "市场规模" in options and "market size" not in options
