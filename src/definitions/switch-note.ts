import { z } from "zod";

/** Who turned an agent off, and when. */
export const SwitchNoteSchema = z.object({
  /** ISO time of the change. */
  at: z.string(),
  /** The actor's kind and name, e.g. `token:ops` or `dashboard:admin`. */
  by: z.string(),
});
export type SwitchNote = z.infer<typeof SwitchNoteSchema>;
