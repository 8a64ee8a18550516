import { describeQuickBenchShare } from "../support/quick-bench-shares.js";

// Share 3 of the quick benches (test/support/quick-bench-shares.ts deals them out by name).
describeQuickBenchShare(3);
