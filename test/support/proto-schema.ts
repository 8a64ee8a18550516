import { readFileSync } from "node:fs";

/** One field of a message as a .proto file declares it. */
export interface ProtoField {
  name: string;
  type: string;
  repeated: boolean;
}

/** Every message of some .proto files, by full name: field number → field. */
export type ProtoMessages = Map<string, Map<number, ProtoField>>;

/**
 * Reads the messages of proto3 files: enough of the grammar for the OpenTelemetry protocol's
 * files (packages, nested messages and enums, `oneof`, `repeated`, comments, options, reserved).
 * Field types are resolved to full message names; enums and scalars keep their type name.
 */
export function readProtoFiles(files: string[]): ProtoMessages {
  const declared: Array<{
    message: string;
    scope: string[];
    fields: Array<ProtoField & { number: number }>;
  }> = [];
  const enums = new Set<string>();
  for (const file of files) {
    const text = readFileSync(file, "utf8")
      .replace(/\/\/[^\n]*/g, "")
      .replace(/\/\*[\s\S]*?\*\//g, "");
    const pkg = /package\s+([\w.]+)\s*;/.exec(text)?.[1] ?? "";
    const tokens = text.match(/[\w.]+|[{};=]/g) ?? [];
    const stack: Array<{ kind: "message" | "enum" | "oneof" | "other"; name: string }> = [];
    const current = () => [...stack].reverse().find((entry) => entry.kind === "message");
    const fullName = (name: string) =>
      [
        pkg,
        ...stack.filter((entry) => entry.kind === "message" || entry.kind === "enum").map((e) => e.name),
        name,
      ]
        .filter(Boolean)
        .join(".");
    for (let index = 0; index < tokens.length; index += 1) {
      const token = tokens[index];
      if (token === "message" || token === "enum" || token === "oneof") {
        const name = tokens[index + 1] ?? "";
        if (token === "enum") enums.add(fullName(name));
        // A message's scope: its package and the messages around it (where its field types resolve).
        if (token === "message")
          declared.push({ message: fullName(name), scope: fullName("").split("."), fields: [] });
        stack.push({ kind: token, name });
        index += 2; // name, "{"
        continue;
      }
      if (token === "}") {
        stack.pop();
        continue;
      }
      if (token === "{") {
        stack.push({ kind: "other", name: "" });
        continue;
      }
      const inMessage = stack.at(-1)?.kind === "message" || stack.at(-1)?.kind === "oneof";
      if (!inMessage || ["option", "reserved", "syntax", "package", "import", ";"].includes(token ?? "")) {
        if (token === "option" || token === "reserved") while (tokens[index] !== ";") index += 1;
        continue;
      }
      // [repeated] type name = number ;
      const repeated = token === "repeated";
      const type = repeated ? tokens[index + 1] : token;
      const name = repeated ? tokens[index + 2] : tokens[index + 1];
      const number = Number(repeated ? tokens[index + 4] : tokens[index + 3]);
      const owner = current();
      if (owner && type && name && Number.isInteger(number)) {
        const entry = declared.findLast((candidate) => candidate.message.endsWith(`.${owner.name}`));
        entry?.fields.push({ name, type, repeated, number });
      }
      while (tokens[index] !== ";") index += 1;
    }
  }
  const messageNames = new Set(declared.map((entry) => entry.message));
  const resolve = (type: string, scope: string[]): string => {
    for (let depth = scope.length; depth >= 0; depth -= 1) {
      const candidate = [...scope.slice(0, depth), type].join(".");
      if (messageNames.has(candidate) || enums.has(candidate))
        return enums.has(candidate) ? "enum" : candidate;
    }
    return type;
  };
  const messages: ProtoMessages = new Map();
  for (const entry of declared) {
    const scope = [...entry.scope, entry.message.split(".").at(-1) ?? ""];
    messages.set(
      entry.message,
      new Map(entry.fields.map((field) => [field.number, { ...field, type: resolve(field.type, scope) }])),
    );
  }
  return messages;
}

/**
 * Decodes a protobuf message by its schema: fields by name, `repeated` as arrays, `bytes` as hex,
 * 64-bit integers as bigint, enums as numbers. Unknown fields are skipped.
 */
export function decodeMessage(
  messages: ProtoMessages,
  type: string,
  bytes: Uint8Array,
): Record<string, unknown> {
  const fields = messages.get(type);
  if (fields === undefined) throw new Error(`no message ${type} in the schema`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const result: Record<string, unknown> = {};
  let position = 0;
  const varint = (): bigint => {
    let value = 0n;
    let shift = 0n;
    for (;;) {
      const byte = bytes[position++];
      if (byte === undefined) throw new Error("truncated varint");
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
      shift += 7n;
    }
  };
  while (position < bytes.length) {
    const tag = Number(varint());
    const number = tag >>> 3;
    const wireType = tag & 7;
    const field = fields.get(number);
    let value: unknown;
    switch (wireType) {
      case 0: {
        const raw = varint();
        value = field?.type === "bool" ? raw !== 0n : field?.type.endsWith("64") ? raw : Number(raw);
        break;
      }
      case 1:
        value =
          field?.type === "double" ? view.getFloat64(position, true) : view.getBigUint64(position, true);
        position += 8;
        break;
      case 5:
        value = field?.type === "float" ? view.getFloat32(position, true) : view.getUint32(position, true);
        position += 4;
        break;
      case 2: {
        const length = Number(varint());
        const slice = bytes.subarray(position, position + length);
        position += length;
        if (field?.type === "string") value = new TextDecoder().decode(slice);
        else if (field?.type === "bytes") value = Buffer.from(slice).toString("hex");
        else if (field && messages.has(field.type)) value = decodeMessage(messages, field.type, slice);
        else value = slice;
        break;
      }
      default:
        throw new Error(`wire type ${wireType} is not used by these files`);
    }
    if (field === undefined) continue;
    if (field.repeated) ((result[field.name] ??= []) as unknown[]).push(value);
    else result[field.name] = value;
  }
  return result;
}
