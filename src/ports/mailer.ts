// The console's email: invitations and password links go to the address they are for, in the
// language the sender chose, and an invitation of an address that already has an account tells
// that address (not the inviter). None configured: the console shows the link instead.

export type MailLang = 'en' | 'zh';

export interface InvitationMail {
  to: string;
  lang: MailLang;
  link: string;
  expires_at: number;
  /** Who invited them (an email address), and to which organisation (none: as an operator). */
  inviter: string;
  organisation_name?: string;
}

export interface ConsoleMailer {
  /** Resolves once the SMTP server took the message; rejects with why it did not. */
  invitation(m: InvitationMail): Promise<void>;
  /** A new link to choose a password (an operator reset it). */
  passwordLink(m: { to: string; lang: MailLang; link: string; expires_at: number }): Promise<void>;
  /** Someone invited an address that has a console account already: told to that address only. */
  alreadyHasAccount(m: Omit<InvitationMail, 'link' | 'expires_at'>): Promise<void>;
}
