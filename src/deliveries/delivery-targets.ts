import type {
  DeliverEntry,
  DeliveriesConfig,
  DeliveryTarget,
  DeliveryWhen,
} from "../config/delivery-settings.js";

/** A target of an agent with the name deliveries, events and the API know it by. */
export interface NamedTarget {
  /** The config name, or `<kind>#<index>` for a target written in `deliver:`. */
  name: string;
  target: DeliveryTarget;
  /** A config `deliveries.targets` entry: read again from the config at each attempt, never stored. */
  shared: boolean;
}

/** The agent's `deliver:` entries as targets (names looked up in config; unknown ones were refused at load). */
export function targetsOf(deliver: readonly DeliverEntry[], deliveries: DeliveriesConfig): NamedTarget[] {
  return deliver.flatMap((entry, index): NamedTarget[] => {
    if (typeof entry !== "string") return [{ name: `${entry.to}#${index}`, target: entry, shared: false }];
    const target = deliveries.targets[entry];
    return target === undefined ? [] : [{ name: entry, target, shared: true }];
  });
}

/** Whether any of the agent's targets is sent to on this occasion (`agent`: the notify tool is offered). */
export function targetsWhen(
  deliver: readonly DeliverEntry[],
  deliveries: DeliveriesConfig,
  when: DeliveryWhen,
): NamedTarget[] {
  return targetsOf(deliver, deliveries).filter(({ target }) => target.when.includes(when));
}
