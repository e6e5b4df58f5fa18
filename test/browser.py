"""A real browser for the viewer tests: Debian's chromium, headless, driven by Playwright (playwright-core's
driver from the PyPI wheel; no browser is downloaded). WebGL renders in software (SwiftShader).

``Screen`` reads screenshots as (H, W, 3) uint8 arrays and waits, polling, for what a person would see."""
from __future__ import annotations

import io
import time
from pathlib import Path

import numpy as np
import pytest

CHROMIUM = Path("/usr/bin/chromium")
#: Flags that work on this kind of machine (a closed network, no GPU, root): docs/viewer.md.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader")
VIEWPORT = {"width": 1000, "height": 700}
#: Generous: a loaded machine renders slowly, and the tests wait for a condition, never for a time.
WAIT_S = 180.0
#: How long [s] the 3-D view's size must stay the same to count as laid out.
CANVAS_SETTLED_S = 1.0
#: Screen regions of the canvas that hold no scene: the software-rendering notice (top left; hidden, but a
#: notice of another kind may take its place) and the axes gizmo (bottom left).
NOTICE = (330, 200)
AXES_CORNER = 90


#: Red pixels that count as "red on the screen" (a link or an object drawn in the colliding colour), and the most
#: that count as none.
RED_PIXELS = 400
NO_RED = 20
#: Pixels of the links' own colour that show the robot is drawn.
ROBOT_PIXELS = 1000


@pytest.fixture(scope="module")
def module_browser():
    """A module's chromium (import it into a test module as a fixture)."""
    playwright, browser = browser_or_skip()
    yield browser
    close_browser(playwright, browser)


def browser_or_skip():
    """(playwright, browser): chromium launched by Playwright (each launch gets a fresh, empty profile of its own), or
    the test skipped saying what is missing."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (scripts/setup_venv.sh test installs Debian's chromium as root)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (requirements/test.txt)")
    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=list(CHROMIUM_FLAGS))
    return playwright, browser


def close_browser(playwright, browser) -> None:
    browser.close()
    playwright.stop()


class Screen:
    """One page of the viewer in the browser."""

    def __init__(self, browser, url: str):
        self.page = browser.new_page(viewport=VIEWPORT)
        self.page.goto(url)
        self.last: np.ndarray | None = None
        canvas = self.page.locator("canvas").first
        canvas.wait_for(timeout=WAIT_S * 1000)
        #: (width, height) [px] of the 3-D view, at the top left of the page (the control panel is on its right).
        self.canvas = self._settled_size(canvas)
        # The notice that WebGL runs in software (shown, maybe more than once, after the page connects) covers part
        # of the view: hidden by a style rule, whenever it comes.
        self.page.add_style_tag(content="#webgl-software-rendering { display: none !important; }")

    @staticmethod
    def _settled_size(canvas) -> tuple[int, int]:
        """The canvas's size once it has stayed the same for CANVAS_SETTLED_S. The control panel docks beside the
        view once the page connects: measured before that, the view's width would be the page's and every
        projection into it would miss. (A guess at one failure of test_the_robot_is_drawn_where_fk_puts_it in a
        full run, which waited 180 s for a robot drawn in place; not reproduced.)"""
        deadline = time.monotonic() + WAIT_S
        size, since = None, time.monotonic()
        while True:
            box = canvas.bounding_box()
            now = (int(box["width"]), int(box["height"]))
            if now != size:
                size, since = now, time.monotonic()
            elif time.monotonic() - since >= CANVAS_SETTLED_S or time.monotonic() > deadline:
                return size
            time.sleep(0.1)

    def shot(self) -> np.ndarray:
        from PIL import Image

        self.last = np.asarray(Image.open(io.BytesIO(self.page.screenshot())).convert("RGB"))
        return self.last

    def wait_for(self, condition, what: str, save_to: Path | None = None):
        """Screenshots until ``condition(image)`` is truthy (returned); fails after WAIT_S saying ``what``."""
        deadline = time.monotonic() + WAIT_S
        while True:
            value = condition(self.shot())
            if value:
                return value
            if time.monotonic() > deadline:
                if save_to is not None:
                    from PIL import Image

                    Image.fromarray(self.last).save(save_to)
                pytest.fail(f"the page never showed {what} within {WAIT_S} s (last screenshot: {save_to})")
            time.sleep(0.5)

    def save(self, path: Path) -> None:
        from PIL import Image

        Image.fromarray(self.shot()).save(path)

    def red(self, image: np.ndarray) -> np.ndarray:
        return red_pixels(image, self.canvas)

    def robot(self, image: np.ndarray) -> np.ndarray:
        return link_pixels(image, self.canvas)

    def close(self) -> None:
        self.page.close()


def scene_mask(image: np.ndarray, canvas: tuple[int, int]) -> np.ndarray:
    """(H, W) bool: the pixels that show the 3-D scene (the canvas, notice and axes gizmo left out)."""
    height, width = image.shape[:2]
    mask = np.zeros((height, width), dtype=bool)
    mask[:canvas[1], :canvas[0]] = True
    mask[:NOTICE[1], :NOTICE[0]] = False
    mask[canvas[1] - AXES_CORNER:canvas[1], :AXES_CORNER] = False
    return mask


def red_pixels(image: np.ndarray, canvas: tuple[int, int]) -> np.ndarray:
    """Pixels of the colliding colour (shaded): strongly red, little green or blue."""
    r, g, b = (image[..., k].astype(int) for k in range(3))
    return (r > 150) & (g < 90) & (b < 90) & (r - g > 90) & scene_mask(image, canvas)


def link_pixels(image: np.ndarray, canvas: tuple[int, int]) -> np.ndarray:
    """Pixels of the links' own colour (shaded steel blue, viewer.shapes.LINK_COLOR)."""
    r, g, b = (image[..., k].astype(int) for k in range(3))
    return (b - r > 35) & (b - g > 15) & (b > 90) & (r > 30) & scene_mask(image, canvas)


def project(points: np.ndarray, camera_position, look_at, size: tuple[int, int], fov_deg: float = 75.0) -> np.ndarray:
    """Pixel (x, y) of world points (n, 3) seen by a pinhole camera (+z up, vertical field of view ``fov_deg``) on
    a canvas of ``size`` (width, height), as three.js draws them (viser's default field of view)."""
    position, target = np.asarray(camera_position, float), np.asarray(look_at, float)
    forward = (target - position) / np.linalg.norm(target - position)
    right = np.cross(forward, (0.0, 0.0, 1.0))
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    relative = np.atleast_2d(points) - position
    x, y, z = relative @ right, relative @ up, relative @ forward
    focal = size[1] / 2 / np.tan(np.radians(fov_deg) / 2)
    return np.stack([size[0] / 2 + focal * x / z, size[1] / 2 - focal * y / z], axis=1)
