import { request } from "node:http";

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, or undefined. */
  body: unknown;
}

export interface RawRequest {
  method?: string;
  path: string;
  /** Sent exactly as given, `host` included (fetch would not let a test forge it). */
  headers?: Record<string, string>;
  /** Sent as given: a string as UTF-8, bytes as they are (invalid UTF-8 included). */
  body?: string | Uint8Array;
}

/** One HTTP/1.1 request with exactly these headers: what a browser or an attacker's page sends. */
export function rawRequest(baseUrl: string, options: RawRequest): Promise<RawReply> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: url.hostname,
        port: url.port,
        method: options.method ?? "GET",
        path: options.path,
        headers: options.headers ?? {},
        setHost: options.headers?.host === undefined,
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body: parse(text) }),
        );
        response.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(options.body);
  });
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
