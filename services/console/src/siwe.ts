/** The Sign-In With Ethereum (EIP-4361) message a wallet signs to sign in here: this site, its origin, the wallet's chain, the API's nonce. */
export function siweMessage({
  domain,
  origin,
  address,
  chainId,
  nonce,
  issuedAt,
}: {
  domain: string;
  origin: string;
  address: string;
  chainId: number;
  nonce: string;
  issuedAt: Date;
}): string {
  return [
    `${domain} wants you to sign in with your Ethereum account:`,
    address,
    '',
    'Sign in to Agentyard.',
    '',
    `URI: ${origin}`,
    'Version: 1',
    `Chain ID: ${chainId}`,
    `Nonce: ${nonce}`,
    `Issued At: ${issuedAt.toISOString()}`,
  ].join('\n');
}

/** The injected wallet (EIP-1193) of the page, when the browser has one. */
export interface InjectedWallet {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}
export function injectedWallet(): InjectedWallet | undefined {
  const candidate = (globalThis as { ethereum?: InjectedWallet }).ethereum;
  return candidate && typeof candidate.request === 'function' ? candidate : undefined;
}
