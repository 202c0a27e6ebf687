import nodemailer, { type Transporter } from 'nodemailer';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
  close(): void;
}

/** Outbound mail over SMTP (nodemailer), with timeouts on every stage of the conversation. */
export function createMailer(settings: { smtpUrl: string; from: string; timeoutMs: number }): Mailer {
  const transport: Transporter = nodemailer.createTransport(settings.smtpUrl, {
    connectionTimeout: settings.timeoutMs,
    greetingTimeout: settings.timeoutMs,
    socketTimeout: settings.timeoutMs,
  } as never);
  return {
    async send(mail) {
      await transport.sendMail({ from: settings.from, ...mail });
    },
    close() {
      transport.close();
    },
  };
}
