"""The fixed pinhole camera of the synthetic CLEVR world.

Where CLEVR's Blender camera sits, with its 35 mm lens on a 32 mm sensor, so a 3D position maps
to about the same image position as in the real renders; projections follow ``pixel_coords``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

# CLEVR v1.0's image size (its real scenes' pixel_coords are in this frame)
IMAGE_WIDTH = 480
IMAGE_HEIGHT = 320

# CLEVR's un-jittered Blender camera location, read from its public base_scene.blend (cameras fitted
# to official images scatter within CLEVR's +-0.5 jitter around it); it looks at the origin.
CLEVR_CAMERA_LOCATION = (7.481, -6.508, 5.344)
# Blender's default lens and sensor width give focal length in pixels = width * 35 / 32.
LENS_MM = 35.0
SENSOR_WIDTH_MM = 32.0

CARDINAL_DIRECTIONS = ("left", "right", "front", "behind")


@dataclass(frozen=True)
class Camera:
    """A pinhole camera looking at the world origin, with z up.

    Example:
        >>> cam = Camera()
        >>> px, py, depth = cam.project_point((0.0, 0.0, 0.0))
        >>> (round(px), round(py))
        (240, 160)
        >>> Camera(width=320, height=240).focal_px      # the lens fills the width, as in Blender
        350.0
    """

    location: tuple[float, float, float] = CLEVR_CAMERA_LOCATION
    width: int = IMAGE_WIDTH
    height: int = IMAGE_HEIGHT
    focal_px: float | None = None  # None: width * LENS_MM / SENSOR_WIDTH_MM
    forward: np.ndarray = field(init=False, repr=False, compare=False)
    right: np.ndarray = field(init=False, repr=False, compare=False)
    up: np.ndarray = field(init=False, repr=False, compare=False)
    _basis: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        loc = np.asarray(self.location, dtype=np.float64)
        if loc.shape != (3,) or not np.all(np.isfinite(loc)) or loc[2] <= 0:
            raise ValueError(f"camera location must be 3 finite numbers above the ground, got {self.location!r}")
        if self.focal_px is None and self.width > 0:
            object.__setattr__(self, "focal_px", self.width * LENS_MM / SENSOR_WIDTH_MM)
        if self.width <= 0 or self.height <= 0 or self.focal_px <= 0:
            raise ValueError("camera width, height and focal length must be positive")
        forward = -loc / np.linalg.norm(loc)
        right = np.cross(forward, (0.0, 0.0, 1.0))
        right /= np.linalg.norm(right)
        up = np.cross(right, forward)
        # frozen dataclass: the derived basis is set once here and never changes
        object.__setattr__(self, "forward", forward)
        object.__setattr__(self, "right", right)
        object.__setattr__(self, "up", up)
        object.__setattr__(self, "_basis", tuple(tuple(float(c) for c in v) for v in (forward, right, up)))

    def project(self, points: np.ndarray) -> np.ndarray:
        """Project world points of shape (n, 3) to (n, 3) rows of [px, py, depth] (floats).

        Example:
            >>> Camera().project(np.zeros((2, 3))).shape
            (2, 3)
        """
        rel = np.asarray(points, dtype=np.float64) - np.asarray(self.location)
        depth = rel @ self.forward
        out = np.empty_like(rel)
        out[:, 0] = self.width / 2 + self.focal_px * (rel @ self.right) / depth
        out[:, 1] = self.height / 2 - self.focal_px * (rel @ self.up) / depth
        out[:, 2] = depth
        return out

    def project_point(self, point) -> tuple[float, float, float]:
        """Project one world point to (px, py, depth): pure Python, several times faster than numpy here.

        Example:
            >>> Camera().project_point((0, 0, 0))[2] > 0
            True
        """
        cx, cy, cz = self.location
        dx, dy, dz = point[0] - cx, point[1] - cy, point[2] - cz
        (fx, fy, fz), (rx, ry, rz), (ux, uy, uz) = self.basis
        depth = dx * fx + dy * fy + dz * fz
        k = self.focal_px / depth
        return (
            self.width / 2 + k * (dx * rx + dy * ry + dz * rz),
            self.height / 2 - k * (dx * ux + dy * uy + dz * uz),
            depth,
        )

    @property
    def basis(self) -> tuple[tuple[float, float, float], ...]:
        """(forward, right, up) unit vectors as plain tuples.

        Example:
            >>> len(Camera().basis)
            3
        """
        return self._basis

    def directions(self) -> dict[str, list[float]]:
        """CLEVR's ``directions``: the camera's right and viewing axes flattened onto the ground.

        Example:
            >>> d = Camera().directions()
            >>> d["above"], d["right"][0] > 0
            ([0.0, 0.0, 1.0], True)
        """
        right = np.array([self.right[0], self.right[1], 0.0])
        right /= np.linalg.norm(right)
        behind = np.array([-right[1], right[0], 0.0])  # up x right: points away from the camera
        as_list = lambda v: [float(c) + 0.0 for c in v]  # + 0.0 turns -0.0 into 0.0
        return {
            "right": as_list(right),
            "behind": as_list(behind),
            "above": [0.0, 0.0, 1.0],
            "below": [0.0, 0.0, -1.0],
            "left": as_list(-right),
            "front": as_list(-behind),
        }

    def view_angle_deg(self) -> float:
        """How far below the horizontal the camera looks, in degrees.

        Example:
            >>> 20 < Camera().view_angle_deg() < 30
            True
        """
        return math.degrees(math.asin(-float(self.forward[2])))


DEFAULT_CAMERA = Camera()

# A pixel_coords fit stops when a step moves the camera less than this (world units).
_FIT_TOLERANCE = 1e-7
_FIT_STEPS = 50


def fit_camera(points, pixels, width: int = IMAGE_WIDTH, height: int = IMAGE_HEIGHT,
               start=CLEVR_CAMERA_LOCATION) -> tuple[Camera, float]:
    """The camera whose projection of ``points`` (n, 3) lands on ``pixels`` (n, 2, in the
    ``width`` x ``height`` frame), and its mean error in pixels.

    CLEVR jittered each image's camera location and kept it aimed, so the 3 numbers of the
    location are recovered from an official scene's ``pixel_coords`` (Gauss-Newton from ``start``).

    Example:
        >>> truth = Camera(location=(7.9, -6.2, 5.1))
        >>> pts = np.array([[1.0, 2.0, 0.35], [-2.0, 0.5, 0.7], [0.0, -2.5, 0.35]])
        >>> cam, err = fit_camera(pts, truth.project(pts)[:, :2])
        >>> [round(c, 3) for c in cam.location], err < 1e-6
        ([7.9, -6.2, 5.1], True)
    """
    points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    target = np.asarray(pixels, dtype=np.float64).reshape(-1, 2)[:, :2]
    if len(points) != len(target) or len(points) < 2:
        raise ValueError(f"fit_camera needs the same number (2 or more) of points and pixels, got "
                         f"{len(points)} and {len(target)}")
    location = np.asarray(start, dtype=np.float64)

    def residual(loc):
        return (Camera(location=tuple(loc), width=width, height=height).project(points)[:, :2] - target).ravel()

    for _ in range(_FIT_STEPS):
        base = residual(location)
        jacobian = np.stack([(residual(location + d) - base) / 1e-6 for d in np.eye(3) * 1e-6], axis=1)
        step = np.linalg.lstsq(jacobian, -base, rcond=None)[0]
        location = location + step
        if location[2] <= 0.1:  # a degenerate fit (points in a line): stay above the floor
            location[2] = 0.1
        if np.linalg.norm(step) < _FIT_TOLERANCE:
            break
    camera = Camera(location=tuple(float(c) for c in location), width=width, height=height)
    error = float(np.mean(np.hypot(*(camera.project(points)[:, :2] - target).T)))
    return camera, error
