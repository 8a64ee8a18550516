import { Counter, Gauge, type Registry } from "prom-client";
import type { EventFeed } from "../events/event-bus.js";
import type { DeliveryStatus } from "./delivery-record.js";

const STATUSES: readonly DeliveryStatus[] = ["pending", "retrying", "sent", "failed"];

/**
 * `agentd_delivery_attempts_total{status}` (every `delivery` event: sent, retrying, failed) and
 * `agentd_deliveries{status}` (the deliveries kept, by status, read at scrape time). Returns the
 * function that stops counting.
 */
export function registerDeliveryMetrics(
  registry: Registry,
  bus: EventFeed,
  deliveries: { counts(): Record<DeliveryStatus, number> } | undefined,
): () => void {
  if (!deliveries) return () => undefined;
  const attempts = new Counter({
    name: "agentd_delivery_attempts_total",
    help: "Delivery attempts, by outcome: sent, retrying (failed, tried again later), failed (given up)",
    labelNames: ["status"],
    registers: [registry],
  });
  new Gauge({
    name: "agentd_deliveries",
    help: "Deliveries kept, by status (pending, retrying, sent, failed)",
    labelNames: ["status"],
    registers: [registry],
    collect() {
      const counts = deliveries.counts();
      for (const status of STATUSES) this.set({ status }, counts[status]);
    },
  });
  return bus.subscribe((event) => {
    if (event.type === "delivery") attempts.inc({ status: event.data.status });
  });
}
