"""Legacy encodings (issue #15): declared charset first, then detection with a warning when
unsure; Japanese and Korean are tagged as such, not as Chinese. Real files through parse_file."""

from __future__ import annotations

from pathlib import Path

import pytest

from footnote.config import IngestSettings
from footnote.ingest import parse_file

JA = "本研究では、検索拡張生成の精度を評価した。実験の結果、提案手法は従来手法より優れていた。"
KO = "본 연구에서는 검색 증강 생성의 정확도를 평가하였다. 실험 결과 제안 방법이 기존 방법보다 우수하였다."
ZH = "本研究评估了检索增强生成的准确性。实验结果表明，所提出的方法优于传统方法。"


@pytest.mark.parametrize(
    ("text", "encoding", "lang"),
    [(JA, "shift_jis", "ja"), (JA, "euc-jp", "ja"), (KO, "euc-kr", "ko"), (ZH, "gb18030", "zh")],
)
def test_legacy_text_files_decode_and_get_their_language(
    tmp_path: Path, text: str, encoding: str, lang: str
) -> None:
    path = tmp_path / f"{encoding}.txt"
    path.write_bytes((text + "\n\n" + text + "\n").encode(encoding))
    parsed = parse_file(path, IngestSettings())
    assert text in " ".join(b.text for b in parsed.blocks)
    assert parsed.source.lang == lang


def test_html_meta_charset_is_honoured(tmp_path: Path) -> None:
    page = (f'<html><head><meta charset="Shift_JIS"><title>研究</title></head>'
            f"<body><h1>研究</h1><p>{JA}</p></body></html>")  # fmt: skip
    path = tmp_path / "page.html"
    path.write_bytes(page.encode("shift_jis"))
    parsed = parse_file(path, IngestSettings())
    assert JA in " ".join(b.text for b in parsed.blocks) and parsed.source.lang == "ja"
    http_equiv = page.replace('<meta charset="Shift_JIS">',
        '<meta http-equiv="Content-Type" content="text/html; charset=euc-kr">'
    ).replace(JA, KO).replace("研究", "연구")  # fmt: skip
    path.write_bytes(http_equiv.encode("euc-kr"))
    assert KO in " ".join(b.text for b in parse_file(path, IngestSettings()).blocks)


def test_a_guess_is_reported() -> None:
    from footnote.ingest.encoding import decode_bytes

    assert decode_bytes(b"plain ascii").warning is None
    assert decode_bytes(JA.encode("utf-8")).encoding == "utf-8"
    odd = bytes(range(128, 256)) * 3  # no encoding makes sense of this
    assert decode_bytes(odd).warning is not None
    wrong = b'<meta charset="utf-8"><p>' + "caf\u00e9 na\u00efve".encode("cp1252") + b"</p>"
    got = decode_bytes(wrong, html=True)
    assert got.warning and "declared" in got.warning
