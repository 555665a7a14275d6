import { createTransport, type Transporter } from 'nodemailer';
import type { ConsoleMailer, InvitationMail, MailLang } from '../ports/mailer.js';
import { LOCALE, translator } from '../pages/console/i18n.js';

// The console's email over SMTP (SMTP_URL: smtp://user:pass@host:587 with STARTTLS when offered,
// smtps://host:465 for TLS from the start), through nodemailer. Plain text in the reader's
// language; the link on a line of its own so that every mail program makes it clickable.

export interface SmtpSettings {
  url: string;
  /** The From address, e.g. `Payment gateway <console@psp.example>`. */
  from: string;
  /** How long one message may take (connect, greeting, send). */
  timeoutMs?: number;
}

export class SmtpMailer implements ConsoleMailer {
  private readonly transport: Transporter;

  constructor(private readonly settings: SmtpSettings) {
    const timeout = settings.timeoutMs ?? 15_000;
    this.transport = createTransport(settings.url, {
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
    });
  }

  private async send(to: string, subject: string, text: string): Promise<void> {
    await this.transport.sendMail({ from: this.settings.from, to, subject, text });
  }

  private when(lang: MailLang, ms: number): string {
    return `${new Intl.DateTimeFormat(LOCALE[lang], { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(ms)} UTC`;
  }

  invitation(m: InvitationMail): Promise<void> {
    const t = translator(m.lang);
    const where = m.organisation_name
      ? t('mail.to_organisation', { organisation: m.organisation_name })
      : t('mail.as_operator');
    return this.send(
      m.to,
      t('mail.invite_subject'),
      t('mail.invite_text', { inviter: m.inviter, where, link: m.link, until: this.when(m.lang, m.expires_at) }),
    );
  }

  passwordLink(m: { to: string; lang: MailLang; link: string; expires_at: number }): Promise<void> {
    const t = translator(m.lang);
    return this.send(
      m.to,
      t('mail.password_subject'),
      t('mail.password_text', { link: m.link, until: this.when(m.lang, m.expires_at) }),
    );
  }

  alreadyHasAccount(m: Omit<InvitationMail, 'link' | 'expires_at'>): Promise<void> {
    const t = translator(m.lang);
    const where = m.organisation_name
      ? t('mail.to_organisation', { organisation: m.organisation_name })
      : t('mail.as_operator');
    return this.send(m.to, t('mail.invite_subject'), t('mail.already_text', { inviter: m.inviter, where }));
  }

  close(): void {
    this.transport.close();
  }
}
