import { ConfigSchema } from "../../src/config/config-schema.js";

interface SchemaNode {
  _zod: {
    def: {
      type: string;
      innerType?: SchemaNode;
      in?: SchemaNode;
      shape?: Record<string, SchemaNode>;
      valueType?: SchemaNode;
      options?: SchemaNode[];
    };
  };
}

/** A key of the config schema: its path (`*` for a free record key) and whether it has a default. */
export interface ConfigKeyPath {
  path: string[];
  hasDefault: boolean;
}

/** Every key path of a zod schema, found by walking its definition. */
function keyPaths(schema: SchemaNode, prefix: string[] = []): ConfigKeyPath[] {
  const definition = schema._zod.def;
  if (definition.innerType) return keyPaths(definition.innerType, prefix);
  if (definition.type === "pipe" && definition.in) return keyPaths(definition.in, prefix);
  if (definition.options) return definition.options.flatMap((option) => keyPaths(option, prefix));
  if (definition.valueType) return keyPaths(definition.valueType, [...prefix, "*"]);
  return Object.entries(definition.shape ?? {}).flatMap(([key, child]) => [
    { path: [...prefix, key], hasDefault: ["default", "prefault"].includes(child._zod.def.type) },
    ...keyPaths(child, [...prefix, key]),
  ]);
}

/** Every key path of `config.yaml`'s schema. */
export function configKeyPaths(): ConfigKeyPath[] {
  return keyPaths(ConfigSchema as unknown as SchemaNode);
}

/** Every key path of any zod object schema (an agent file's frontmatter, a preset). */
export function schemaKeyPaths(schema: unknown): ConfigKeyPath[] {
  return keyPaths(schema as SchemaNode);
}
