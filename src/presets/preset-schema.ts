import { z } from "zod";

/** SPEC 2: `presets/<name>.yaml`. */
export const PresetSchema = z.strictObject({
  name: z.string().min(1).optional(),
  role: z.string().min(1).optional(),
  description: z.string().optional(),
  critical_rules: z.array(z.string().min(1)).default([]),
  deliverable_templates: z
    .array(z.strictObject({ name: z.string().min(1), template: z.string().min(1) }))
    .default([]),
  success_metrics: z.array(z.string().min(1)).default([]),
  extends: z.string().min(1).optional(),
});
export type Preset = z.infer<typeof PresetSchema>;
