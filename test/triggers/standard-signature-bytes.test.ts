import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { verifyDelivery } from "../../src/triggers/webhook-signature.js";

const SECRET = `whsec_${Buffer.from("standard-signature-bytes-key-0123").toString("base64")}`;
const signer = new Webhook(SECRET);
const at = new Date();

/** The Standard Webhooks headers of `signed` (its text as the library signs it). */
function headersOver(signed: string) {
  return {
    "webhook-id": "msg_bytes",
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signer.sign("msg_bytes", at, signed),
  };
}

describe("a Standard Webhooks signature", () => {
  it("verifies the very bytes it was made over", () => {
    const body = Buffer.from('{"name":"zoë"}');
    expect(verifyDelivery("standard", SECRET, body, headersOver(body.toString("utf8")))).toBe(true);
  });

  it("does not verify another body whose bytes that are not UTF-8 read as the same text", () => {
    // 0xfe and 0xff both read as U+FFFD: a signature over one must not cover the other.
    const signedBody = Buffer.from([...Buffer.from('{"a":"'), 0xfe, ...Buffer.from('"}')]);
    const sentBody = Buffer.from([...Buffer.from('{"a":"'), 0xff, ...Buffer.from('"}')]);
    expect(verifyDelivery("standard", SECRET, sentBody, headersOver(signedBody.toString("utf8")))).toBe(
      false,
    );
  });

  it("does not verify a body with a byte order mark by a signature over the body without it", () => {
    const body = Buffer.from('\ufeff{"a":1}');
    expect(verifyDelivery("standard", SECRET, body, headersOver('{"a":1}'))).toBe(false);
    expect(verifyDelivery("standard", SECRET, body, headersOver('\ufeff{"a":1}'))).toBe(true);
  });
});
