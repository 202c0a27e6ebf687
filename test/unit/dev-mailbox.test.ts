import t from 'tap';
import nodemailer from 'nodemailer';
import { startMailbox } from '../../scripts/lib/mailbox.ts';

// `npm start` without SMTP_URL: mail goes to a local mailbox whose web inbox shows it.
t.test('a mail sent to the development mailbox is readable in its inbox, links clickable', async (t) => {
  const box = await startMailbox({ smtpPort: 0, webPort: 0 });
  t.teardown(() => box.close());
  t.match(await (await fetch(box.inboxUrl)).text(), /No mail yet/);
  const link = `https://platform.test/verify-email?token=abc_DEF-123&x=${'y'.repeat(90)}`;
  await nodemailer.createTransport(box.smtpUrl).sendMail({
    from: 'noreply@platform.test',
    to: 'new@user.test',
    subject: 'Vérifiez your email',
    text: `Open ${link} to verify.`,
    html: `<p>Open <a href="${link}">this</a></p>`,
  });
  const page = await (await fetch(box.inboxUrl)).text();
  t.match(page, /<h2>Vérifiez your email<\/h2>/, 'the subject, decoded');
  t.match(page, /to new@user\.test/);
  t.ok(page.includes(`href="${link.replace('&', '&#38;')}"`), 'the whole link (quoted-printable unfolded), clickable');
  const [mail] = (await (await fetch(`${box.inboxUrl}messages.json`)).json()) as { text: string }[];
  t.ok(mail!.text.includes(link));
});
