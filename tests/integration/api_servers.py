"""Loopback HTTP servers that speak real API formats (OpenAlex, arXiv Atom, Semantic Scholar,
a licensed-database API) and a misbehaving web server (redirects, huge and slow bodies)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

Route = Callable[[dict[str, str], dict[str, str]], tuple[int, str, bytes | str, dict[str, str]]]

OPENALEX = {
    "meta": {"count": 1},
    "results": [
        {
            "id": "https://openalex.org/W2963403868",
            "doi": "https://doi.org/10.18653/v1/n19-1423",
            "display_name": "BERT: Pre-training of Deep Bidirectional Transformers",
            "publication_year": 2019,
            "publication_date": "2019-06-01",
            "ids": {"openalex": "https://openalex.org/W2963403868"},
            "authorships": [
                {"author": {"display_name": "Jacob Devlin"}},
                {"author": {"display_name": "Ming-Wei Chang"}},
            ],
            "abstract_inverted_index": {
                "We": [0],
                "introduce": [1],
                "a": [2],
                "new": [3],
                "language": [4],
                "model": [5],
                "called": [6],
                "BERT.": [7],
            },
            "open_access": {"is_oa": True, "oa_url": "PDFURL"},
            "best_oa_location": {
                "pdf_url": "PDFURL",
                "license": "cc-by",
                "landing_page_url": "https://aclanthology.org/N19-1423",
            },
        }
    ],
}

ARXIV = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <title type="html">ArXiv Query: search_query=all:citation</title>
  <entry>
    <id>http://arxiv.org/abs/2004.07180v4</id>
    <published>2020-04-15T17:15:40Z</published>
    <title>SPECTER: Document-level Representation Learning using
      Citation-informed Transformers</title>
    <summary>  Representation learning is a critical ingredient for natural language
      processing systems. We propose SPECTER.</summary>
    <author><name>Arman Cohan</name></author>
    <author><name>Sergey Feldman</name></author>
    <arxiv:doi>10.18653/v1/2020.acl-main.207</arxiv:doi>
    <link href="http://arxiv.org/abs/2004.07180v4" rel="alternate" type="text/html"/>
    <link title="pdf" href="PDFURL" rel="related" type="application/pdf"/>
  </entry>
</feed>
"""

S2 = {
    "total": 1,
    "data": [
        {
            "paperId": "649def34f8be52c8b66281af98ae884c09aef38b",
            "title": "Construction of the Literature Graph in Semantic Scholar",
            "abstract": "We describe a deployed scalable system for organizing published literature.",
            "year": 2018,
            "publicationDate": "2018-05-06",
            "authors": [{"authorId": "1", "name": "Waleed Ammar"}],
            "externalIds": {"DOI": "10.18653/v1/N18-3011", "ArXiv": "1805.02262"},
            "openAccessPdf": {"url": "PDFURL", "status": "GREEN", "license": "cc-by"},
            "url": "https://www.semanticscholar.org/paper/649def34",
        }
    ],
}

LICENSED = {
    "documents": [
        {
            "id": "lic-001",
            "title": "Veldmark Recycling Monitor, Q2 2024",
            "text": "Licensed analysis: Korvath processed 9,800 tonnes of lithium-ion batteries in Q2 2024.",
            "published_at": "2024-07-01",
            "url": "https://licensed.example/doc/lic-001",
        }
    ]
}


class ApiServer:
    """A ThreadingHTTPServer on a free loopback port with routes `path -> handler`."""

    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self.seen: list[tuple[str, dict[str, str], dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                params = {k: v[0] for k, v in parse_qs(parts.query).items()}
                headers = {k.lower(): v for k, v in self.headers.items()}
                server.seen.append((parts.path, params, headers))
                route = server.routes.get(parts.path)
                if route is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                code, ctype, body, extra = route(params, headers)
                data = body.encode() if isinstance(body, str) else body
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                for k, v in extra.items():
                    self.send_header(k, v)
                if "slow" not in extra:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if extra.get("slow"):
                    for _ in range(20):
                        self.wfile.write(data[:10])
                        self.wfile.flush()
                        time.sleep(0.2)
                    return
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        self.base = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def json_route(payload: Any, pdf_url: str = "") -> Route:
    body = json.dumps(payload).replace("PDFURL", pdf_url)
    return lambda _p, _h: (200, "application/json", body, {})
