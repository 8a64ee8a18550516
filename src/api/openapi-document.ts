/** The part of an OpenAPI operation this file adds to. */
interface Operation {
  parameters?: Array<Record<string, unknown>>;
}

type OpenApiDocument = { paths?: Record<string, Record<string, Operation>> } & Record<string, unknown>;

/**
 * Completes what @fastify/swagger cannot take from route schemas: the Last-Event-ID header of the
 * event stream (read by the route itself, so it has no validated header schema).
 */
export function completeOpenApiDocument(document: OpenApiDocument): OpenApiDocument {
  const stream = document.paths?.["/agents/{id}/events/stream"]?.get;
  if (stream && !stream.parameters?.some((parameter) => parameter.name === "Last-Event-ID")) {
    stream.parameters = [
      ...(stream.parameters ?? []),
      {
        name: "Last-Event-ID",
        in: "header",
        required: false,
        description: "the id of the last event received: the stream replays what followed it",
        schema: { type: "string", pattern: "^\\d{1,15}$" },
      },
    ];
  }
  return document;
}
