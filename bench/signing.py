"""Signing's share of a PDF: WeasyPrint rendering a dossier-sized and a pack-sized plain document
(`bench.pdfs.plain_html`, the PDFs' stylesheet) against `evidence.signing.sign_issued` signing the result, with a
throwaway identity (EC P-256, as the development one). Signing happens once per stored PDF, so this is the cost
added to each dossier, board pack, minutes and contract when it is made.

    python -m bench.signing [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class SigningResult:
    paragraphs: int
    pages: int
    render_s: float  # evidence.pdf.html_to_pdf, median
    sign_s: float  # evidence.signing.sign_issued, median
    verify_s: float  # evidence.signing.verify_issued, median

    @property
    def share(self) -> float:
        """Signing's share of making the stored PDF (render + sign)."""
        return self.sign_s / (self.render_s + self.sign_s)


def run_signing(*, rounds: int = 5, sizes: tuple[int, ...] = (40, 400)) -> list[SigningResult]:
    """Median render, sign and verify times for plain documents of `sizes` paragraphs."""
    from app import create_app
    from bench.pdfs import page_count, plain_html
    from evidence import signing
    from evidence.pdf import html_to_pdf

    folder = tempfile.mkdtemp(prefix="gambit-bench-signing-")
    app = create_app({"TESTING": True, "SECRET_KEY": "bench", "SQLALCHEMY_DATABASE_URI": "sqlite://",
                      "UPLOAD_DIR": f"{folder}/uploads", "SIGNING_PKCS12": ""})
    app.instance_path = folder  # the development identity is made here, not in the real instance/
    out = []
    with app.app_context():
        identity = signing.load_identity()
        signing.sign_issued(html_to_pdf(plain_html(1), timeout=300), document="warm-up", identity=identity)
        for n in sizes:
            html = plain_html(n)
            render, sign, verify = [], [], []
            pdf = b""
            for _ in range(rounds):
                t = time.perf_counter()
                pdf = html_to_pdf(html, timeout=300)
                render.append(time.perf_counter() - t)
                t = time.perf_counter()
                signed = signing.sign_issued(pdf, document=f"bench {n}", identity=identity)
                sign.append(time.perf_counter() - t)
                t = time.perf_counter()
                assert signing.verify_issued(signed, identity=identity).ok
                verify.append(time.perf_counter() - t)
            out.append(SigningResult(n, page_count(pdf), statistics.median(render), statistics.median(sign),
                                     statistics.median(verify)))
    return out


def report(results: list[SigningResult]) -> str:
    lines = ["| document | pages | render | sign | signing's share | verify |", "|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| plain, {r.paragraphs} paragraphs | {r.pages} | {r.render_s * 1000:.0f} ms | "
                     f"{r.sign_s * 1000:.0f} ms | {r.share:.1%} | {r.verify_s * 1000:.0f} ms |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print(report(run_signing(rounds=args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
