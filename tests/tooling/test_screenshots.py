"""make screenshots writes exactly the pictures the docs reference, at the sizes it promises: the
tool's list of names is docs/images/, and each file is a PNG of its viewport's width."""

from __future__ import annotations

import io
import struct

from devstack.tools import screenshots

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from the IHDR chunk, which the PNG specification puts first."""
    assert data[:8] == PNG_SIGNATURE, "not a PNG"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert (length, kind) == (13, b"IHDR"), "the first chunk of a PNG is its 13-byte IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_images_folder_holds_exactly_the_tools_pictures() -> None:
    names = screenshots.file_names()
    assert len(names) == len(set(names)) == 20
    assert sorted(path.name for path in screenshots.IMAGES.glob("*.png")) == sorted(names)


def test_each_picture_is_a_png_of_its_viewports_width() -> None:
    for view, (width, height) in screenshots.VIEWS.items():
        for language in screenshots.LANGUAGES:
            path = screenshots.IMAGES / f"{view}-{language}.png"
            shown_width, shown_height = png_size(path.read_bytes())
            assert shown_width == width, f"{path.name}: {shown_width} px wide, not {width} (device scale 1)"
            assert shown_height >= height, f"{path.name}: {shown_height} px high, less than the viewport"


def test_the_sizes_are_a_phone_and_a_desktop() -> None:
    phone = {view for view in screenshots.VIEWS if view.startswith("phone-")}
    assert phone == {"phone-inbox", "phone-fax"}
    assert {screenshots.VIEWS[view] for view in phone} == {(390, 844)}
    assert {size for view, size in screenshots.VIEWS.items() if view not in phone} == {(1280, 800)}


def test_the_pictures_faxes_show_what_the_guides_explain() -> None:
    """The sample faxes are read by the sender parser as the guides describe the rows: a number
    from a fax service's subject, a withheld number, and one fax split over two e-mails ([1/2],
    [2/2]); each carries a real file (a TIFF at fax resolution or a PDF) for its thumbnail."""
    from PIL import Image

    from lib.fax.senders import parse_sender

    samples = {sample.key: sample for sample in screenshots.samples()}
    read = {key: parse_sender(sample.subject, sample.sender) for key, sample in samples.items()}
    assert read["efax"].number_display == "06-6123-4567"
    assert read["withheld"].number is None and read["withheld"].withheld
    assert [read[key].part.number if read[key].part else None for key in ("split1", "split2")] == [1, 2]
    assert read["split1"].number == read["split2"].number == "0311112222"
    for sample in samples.values():
        for name, kind, content in sample.files:
            if kind == "image/tiff":
                with Image.open(io.BytesIO(content)) as tiff:
                    assert tiff.info["compression"] == "group4" and tiff.info["dpi"] == (204, 98), name
            else:
                assert kind == "application/pdf" and content.startswith(b"%PDF-"), name
    # Received in the order listed, over a morning, not as one burst.
    ages = [sample.age_minutes for sample in samples.values()]
    assert ages == sorted(ages, reverse=True) and len(set(ages)) == len(ages)
