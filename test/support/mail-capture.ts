import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";

/** A mail the capturing server took: its envelope's recipients and its whole data (headers and body). */
export interface CapturedMail {
  to: string[];
  data: string;
}

/** A real SMTP server on 127.0.0.1 that keeps every mail it is given, for delivery tests. */
export interface MailCapture {
  mails: CapturedMail[];
  port: number;
  close: () => Promise<void>;
}

/**
 * Starts a capturing SMTP server; `options` add to or replace the defaults (no TLS, no login
 * required), e.g. `onAuth` for a server that asks for one.
 */
export async function captureMails(options: Partial<SMTPServerOptions> = {}): Promise<MailCapture> {
  const mails: CapturedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    ...options,
    onData(stream, session, callback) {
      let data = "";
      stream.setEncoding("utf8").on("data", (chunk: string) => (data += chunk));
      stream.on("end", () => {
        mails.push({ to: session.envelope.rcptTo.map((recipient) => recipient.address), data });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    mails,
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
