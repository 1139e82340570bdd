"""Dark mode and accessibility of the pending and failure pages."""

from __future__ import annotations

from playwright.sync_api import expect


def _format(violations: list[dict]) -> str:
    return "\n".join(
        f"{v['impact']} {v['id']}: {v['help']}\n    " + "\n    ".join(v["nodes"][:5])
        for v in violations
    )


def test_dark_mode_failure_page(make_hub_page, images_dir) -> None:
    hub_page = make_hub_page(color_scheme="dark")
    page = hub_page.page
    hub_page.spawn("no-node-fits")
    expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
    expect(page.locator("#rp-failure")).to_be_visible()
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
    expect(page.locator("#richprogress-failed")).to_be_visible()
    # the page follows the theme: its background is dark, its text light
    background, color = page.evaluate(
        """() => {
            const s = getComputedStyle(document.body);
            return [s.backgroundColor, s.color];
        }"""
    )
    assert _luminance(background) < 0.3 < _luminance(color), (background, color)
    page.screenshot(path=str(images_dir / "dark.png"))


def _luminance(css_color: str) -> float:
    """Rough relative luminance (0 black .. 1 white) of an ``rgb(...)``/``rgba(...)`` value."""
    numbers = css_color[css_color.index("(") + 1 : css_color.index(")")].split(",")
    red, green, blue = (float(n) / 255 for n in numbers[:3])
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def test_no_serious_accessibility_violations(hub_page, axe_source) -> None:
    page = hub_page.page
    hub_page.spawn("image-not-found")
    expect(hub_page.rows().first).to_be_visible()
    pending = hub_page.axe_violations(axe_source)
    assert pending == [], "pending page:\n" + _format(pending)
    expect(page.locator("#rp-failure")).to_be_visible()
    failed_live = hub_page.axe_violations(axe_source)
    assert failed_live == [], "failed (live):\n" + _format(failed_live)
    page.reload()
    expect(page.locator("#richprogress-failed")).to_be_visible()
    failed_page = hub_page.axe_violations(axe_source)
    assert failed_page == [], "failure page:\n" + _format(failed_page)
