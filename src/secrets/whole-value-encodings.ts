/**
 * Encodings of a value's bytes whose alphabets hold quotes, backslashes and blanks (matched
 * exactly, in the output as printed: the decoding views would change them), and the value as one
 * decimal number (`int.from_bytes`, matched where output lists numbers). Each is the value encoded
 * alone, as a program prints it when told to encode the value (`base64.a85encode(value)`,
 * `binascii.b2a_uu(value)`); inside a longer text, a uuencode or Ascii85 block is decoded instead
 * (encodedBlocksView).
 */
export function wholeValueEncodings(bytes: Buffer): { exact: string[]; decimal: string } {
  return {
    exact: [
      base85(bytes, ASCII85, true),
      base85(bytes, RFC1924, false),
      base85(bytes, Z85, false),
      base58(bytes),
      ...uuencodeForms(bytes),
    ],
    decimal: bigNumber(bytes).toString(10),
  };
}

/** Ascii85 (`base64.a85encode`, Adobe's `<~…~>`, PDF and PostScript). */
const ASCII85 = Array.from({ length: 85 }, (_, index) => String.fromCharCode(33 + index)).join("");
/** RFC 1924's alphabet: Python's `base64.b85encode`, git's binary patches (compressed there first). */
const RFC1924 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
/** ZeroMQ's Z85 (`base64.z85encode`, CURVE keys). */
const Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
/** Bitcoin's base58 (`base58`, Solana and IPFS keys). */
const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Longest value uuencode writes on one line (45 bytes, `M`): a longer one is split over lines. */
const UUENCODE_LINE_BYTES = 45;

/**
 * Base85: 4 bytes a group, 5 characters, the last group of fewer bytes padded and cut to one
 * character more than its bytes (as Python writes it); Ascii85 writes a group of zeros as `z`.
 */
function base85(bytes: Buffer, alphabet: string, zeros: boolean): string {
  let encoded = "";
  for (let at = 0; at < bytes.length; at += 4) {
    const group = Buffer.alloc(4);
    bytes.copy(group, 0, at, at + 4);
    const length = Math.min(4, bytes.length - at);
    let value = group.readUInt32BE(0);
    if (zeros && length === 4 && value === 0) {
      encoded += "z";
      continue;
    }
    let characters = "";
    for (let digit = 0; digit < 5; digit++) {
      characters = (alphabet[value % 85] as string) + characters;
      value = Math.floor(value / 85);
    }
    encoded += characters.slice(0, length + 1);
  }
  return encoded;
}

/** The bytes as one big-endian number. */
function bigNumber(bytes: Buffer): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${bytes.toString("hex")}`);
}

/** Base58: the bytes as one number in base 58, each leading zero byte as `1`. */
function base58(bytes: Buffer): string {
  let value = bigNumber(bytes);
  let encoded = "";
  while (value > 0n) {
    encoded = (BASE58[Number(value % 58n)] as string) + encoded;
    value /= 58n;
  }
  for (const byte of bytes) {
    if (byte !== 0) break;
    encoded = `1${encoded}`;
  }
  return encoded;
}

/**
 * uuencode's characters (a 6-bit group as the character 32 above it, zero as `` ` `` in uuencode
 * and Perl's `pack "u"`, as a blank in Python's `b2a_uu`) for the value alone, after the line's
 * length character. A value inside a `begin`…`end` block is read by encodedBlocksView.
 */
function uuencodeForms(bytes: Buffer): string[] {
  if (bytes.length > UUENCODE_LINE_BYTES) return [];
  return [uuencode(bytes, " "), uuencode(bytes, "`")];
}

function uuencode(bytes: Buffer, zero: string): string {
  let encoded = "";
  for (let at = 0; at < bytes.length; at += 3) {
    const value = ((bytes[at] ?? 0) << 16) | ((bytes[at + 1] ?? 0) << 8) | (bytes[at + 2] ?? 0);
    for (const shift of [18, 12, 6, 0]) {
      const sixBits = (value >> shift) & 63;
      encoded += sixBits === 0 ? zero : String.fromCharCode(32 + sixBits);
    }
  }
  return encoded;
}
