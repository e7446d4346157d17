"""Texture covariance descriptors by section 5.2's Brodatz protocol, on images that install with a package.

The paper uses the 111 Brodatz textures (640 x 640, grey): each image is cut into four sub-images
of equal size, one picked at random for testing and the other three for training, and 50
covariance descriptors of ``[I, |I_x|, |I_y|, |I_xx|, |I_yy|]`` are taken over randomly placed
128 x 128 patches of the training part and 50 of the testing part, per texture.

The Brodatz album does not install with a package.  scikit-image ships three grey texture
photographs inside its wheel (``skimage.data.brick``, ``grass``, ``gravel``; 512 x 512, no download),
so the dataset ``images/textures`` is those three classes under the same protocol: four 256 x 256
sub-images per texture, one chosen for testing by the instance seed, ``patches_per_image``
patches of ``patch`` x ``patch`` pixels (default 50 and 128: the paper's pixel size, since texture
statistics depend on scale) drawn uniformly inside the training sub-images (a random one of the
three per patch) and inside the test sub-image.  Intensities are divided by 255.  Three classes
against the paper's 111 make the task much easier (Eye may already be near 100 %); the digits
variant (``sklearn/digits``, 10 classes, one descriptor per 8 x 8 image) is the harder companion.

scikit-image is an optional extra (``pip install 'psdbench[images]'``); without it the dataset
is unavailable with a one-line reason.
"""

from __future__ import annotations

import numpy as np

from psdbench.api import Dataset, DataError
from psdbench.families.bregman_dykstra.pairs import covariance_descriptor

NAMES = ("brick", "grass", "gravel")
DATASET = "images/textures"


def texture_images() -> tuple[np.ndarray, tuple[str, ...], str]:
    """The three scikit-image textures as floats in [0, 1], (3, 512, 512), their names and the version."""
    try:
        import skimage
        from skimage import data
    except ImportError:  # pragma: no cover - depends on the environment
        raise DataError(f"{DATASET} needs scikit-image (pip install 'psdbench[images]')") from None
    imgs = [np.asarray(getattr(data, name)(), float) / 255.0 for name in NAMES]
    if any(im.ndim != 2 for im in imgs):
        raise DataError(f"{DATASET}: scikit-image's textures are not grey images in this version")
    side = min(min(im.shape) for im in imgs)
    return np.stack([im[:side, :side] for im in imgs]), NAMES, skimage.__version__


class ImageCollection:
    """The ``images`` collection: ``images/textures`` where scikit-image is installed."""

    def names(self) -> list[str]:
        """``["textures"]`` with scikit-image installed, else nothing."""
        import importlib.util

        return ["textures"] if importlib.util.find_spec("skimage") is not None else []

    def check(self, name: str) -> None:
        """One-line :class:`DataError` (exit 2 at grid load) for an unknown name or a missing scikit-image."""
        if name != "textures":
            raise DataError(f"unknown dataset 'images/{name}' (known: images/textures)")
        if not self.names():
            raise DataError(f"{DATASET} needs scikit-image (pip install 'psdbench[images]')")

    def load(self, name: str) -> Dataset:
        """The images in ``payload["texture_images"]``; no samples (the problem cuts the patches)."""
        self.check(name)
        imgs, names, version = texture_images()
        return Dataset(name=DATASET, source=f"scikit-image {version}: skimage.data.{{{', '.join(names)}}}",
                       label_coding="class k = the k-th texture (" + ", ".join(names) + ")",
                       meta={"n_classes": len(names), "image_side": int(imgs.shape[1])},
                       payload={"texture_images": imgs, "texture_names": names})


def quadrants(img: np.ndarray) -> list[np.ndarray]:
    """The four sub-images of equal size (top-left, top-right, bottom-left, bottom-right)."""
    h, w = img.shape[0] // 2, img.shape[1] // 2
    return [img[:h, :w], img[:h, w:2 * w], img[h:2 * h, :w], img[h:2 * h, w:2 * w]]


def random_patch(img: np.ndarray, patch: int, rng: np.random.Generator) -> np.ndarray:
    """A ``patch`` x ``patch`` window placed uniformly inside ``img``."""
    r = int(rng.integers(img.shape[0] - patch + 1))
    c = int(rng.integers(img.shape[1] - patch + 1))
    return img[r:r + patch, c:c + patch]


def brodatz_descriptors(images: np.ndarray, *, patch: int, patches_per_image: int,
                        seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Section 5.2's protocol: ``(C_train, y_train, C_test, y_test)``, descriptors (N, 5, 5).

    Per texture ``k``: the test sub-image is drawn by ``seed``; ``patches_per_image`` descriptors
    come from random patches of the three training sub-images (a random sub-image per patch) and
    as many from the test sub-image.  Train and test never share a pixel.
    """
    images = np.asarray(images, float)
    side = images.shape[1] // 2
    if not 3 <= patch <= side:
        raise DataError(f"{DATASET}: patch = {patch} must lie in [3, {side}] (the sub-image side)")
    rng = np.random.default_rng([seed, 5, 2])
    Ctr, ytr, Cte, yte = [], [], [], []
    for k, img in enumerate(images):
        subs = quadrants(img)
        test = int(rng.integers(4))
        train = [q for i, q in enumerate(subs) if i != test]
        for _ in range(patches_per_image):
            Ctr.append(covariance_descriptor(random_patch(train[int(rng.integers(3))], patch, rng)))
            ytr.append(k)
        for _ in range(patches_per_image):
            Cte.append(covariance_descriptor(random_patch(subs[test], patch, rng)))
            yte.append(k)
    return np.stack(Ctr), np.asarray(ytr), np.stack(Cte), np.asarray(yte)
