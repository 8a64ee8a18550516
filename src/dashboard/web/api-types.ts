// What the page reads from the public HTTP API: the API's own response schemas, imported as types
// only, so the page and the API cannot drift apart and nothing of zod or the daemon reaches the
// browser (every import here is erased by the build).
import type { z } from "zod";
import type {
  AgentDetailSchema,
  AgentSummarySchema,
  DeliveryListSchema,
  DeliveryTargetListSchema,
  MemoryHistorySchema,
  TriggerListSchema,
  EventSchema,
  MergedEventPageSchema,
  PendingApprovalSchema,
  PendingQuestionSchema,
  RunRecordSchema,
  SandboxViewSchema,
} from "../../api/response-schemas.js";

export type AgentSummary = z.infer<typeof AgentSummarySchema>;
export type AgentDetail = z.infer<typeof AgentDetailSchema>;
export type ErrorDetail = NonNullable<AgentSummary["error_details"]>[number];
/** What an agent's sandboxed commands see: `GET /agents/:id`'s `sandbox_view`. */
export type SandboxView = z.infer<typeof SandboxViewSchema>;
export type RunRecord = z.infer<typeof RunRecordSchema>;
export type RunStatus = RunRecord["status"];
export type AgentEvent = z.infer<typeof EventSchema>;
export type MergedPage = z.infer<typeof MergedEventPageSchema>;
export type PendingApproval = z.infer<typeof PendingApprovalSchema>;
export type PendingQuestion = z.infer<typeof PendingQuestionSchema>;

export type DeliveryList = z.infer<typeof DeliveryListSchema>;
export type Delivery = DeliveryList["deliveries"][number];
export type DeliveryTargetList = z.infer<typeof DeliveryTargetListSchema>;
export type DeliveryTargetStatus = DeliveryTargetList["targets"][number];
export type TriggerList = z.infer<typeof TriggerListSchema>;
export type TriggerStatus = TriggerList["triggers"][number];

export const FINISHED_STATUSES: ReadonlySet<RunStatus> = new Set(["completed", "failed", "stopped"]);
/** `GET /agents/:id/memory/history`: a memory's changes, newest first. */
export type MemoryHistory = z.infer<typeof MemoryHistorySchema>;
