// Downloads of exports: fetched with the caller's credentials (an API key header cannot ride on
// a plain link), then saved under the file name the server gives.

import { authHeaders } from "./auth";
import { h } from "./dom";
import { errorText, toast } from "./ui";

/** Fetch an export with the caller's credentials and save it under the server's file name. */
export async function download(path: string): Promise<void> {
  try {
    const response = await fetch(path, { headers: authHeaders() });
    if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
    const name = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") ?? "")?.[1] ?? "export";
    const url = URL.createObjectURL(await response.blob());
    const a = h("a", { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (err) {
    toast(errorText(err), "error");
  }
}
