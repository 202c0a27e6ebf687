import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { get } from '../api.ts';
import { when } from '../format.ts';
import type { LinkedWallet, WalletOverview } from '../types.ts';
import { Button, CopyButton, Empty, ErrorNote, Field, Loading, TableRegion } from '../ui.tsx';

const short = (address: string) => `${address.slice(0, 6)}…${address.slice(-4)}`;
/** A decimal string cut to `places` decimals for reading (the full figure stays in its title). */
const decimals = (value: string, places: number) => {
  const [whole, fraction = ''] = value.split('.');
  const cut = fraction.slice(0, places).replace(/0+$/, '');
  return cut ? `${whole}.${cut}` : whole!;
};

/** The wallet the user linked by wallet sign-in, read from the chain: balances, USDC transfers, and buying AI credits. */
export function WalletPage() {
  const linked = useQuery({ queryKey: ['wallet-address'], queryFn: () => get<LinkedWallet>('/api/wallet/address') });
  const address = linked.data?.address ?? null;
  const wallet = useQuery({
    queryKey: ['wallet', address],
    queryFn: () => get<WalletOverview>('/api/wallet'),
    enabled: address !== null,
    refetchInterval: 60_000,
  });
  return (
    <>
      <h1>Wallet</h1>
      {linked.isPending ? (
        <Loading what="your wallet" />
      ) : linked.isError ? (
        <ErrorNote error={linked.error} />
      ) : address === null ? (
        <Empty title="No wallet linked">
          <p>
            Sign in once with an Ethereum wallet on the sign-in page and it is linked to this account; its balances and
            transfers show here.
          </p>
        </Empty>
      ) : (
        <>
          <section className="card" aria-labelledby="wallet-balances">
            <h2 id="wallet-balances">Balances</h2>
            <dl className="facts">
              <dt>Address</dt>
              <dd>
                <code title={address}>{short(address)}</code>{' '}
                <CopyButton value={address} label="Copy the wallet address" />
              </dd>
              <dt>Linked</dt>
              <dd>{when(linked.data?.linkedAt)}</dd>
              {wallet.data && (
                <>
                  <dt>{wallet.data.native.symbol}</dt>
                  <dd title={wallet.data.native.balance}>{decimals(wallet.data.native.balance, 6)}</dd>
                  <dt>USDC</dt>
                  <dd title={wallet.data.usdc.balance}>{decimals(wallet.data.usdc.balance, 2)}</dd>
                  <dt>Read at</dt>
                  <dd>
                    block {wallet.data.blockNumber} of chain {wallet.data.chainId}, {when(wallet.data.fetchedAt)}
                  </dd>
                </>
              )}
            </dl>
            {wallet.isPending && <Loading what="balances from the chain" />}
            <ErrorNote error={wallet.error} />
          </section>
          {wallet.data && (
            <TableRegion label="USDC transfers" card>
              <h2>USDC transfers</h2>
              {wallet.data.transfers.length === 0 ? (
                <p className="muted">No USDC transfer yet.</p>
              ) : (
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Block</th>
                      <th scope="col">Direction</th>
                      <th scope="col">Amount</th>
                      <th scope="col">Counterparty</th>
                    </tr>
                  </thead>
                  <tbody>
                    {wallet.data.transfers.map((transfer) => {
                      const other = transfer.direction === 'in' ? transfer.from : transfer.to;
                      return (
                        <tr key={`${transfer.hash}-${transfer.direction}`}>
                          <td>{transfer.blockNumber}</td>
                          <td>{transfer.direction === 'in' ? 'Received' : 'Sent'}</td>
                          <td>{transfer.amount} USDC</td>
                          <td>
                            <code title={other}>{short(other)}</code>
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              )}
            </TableRegion>
          )}
        </>
      )}
      <TopUp />
    </>
  );
}

/** Buying AI credits: the credits checkout, as the billing page's (paid by card, not from the wallet). */
function TopUp() {
  const [amount, setAmount] = useState('10');
  const value = Number(amount);
  const valid = Number.isFinite(value) && value >= 5 && value <= 1000 && /^\d+(\.\d{1,2})?$/.test(amount);
  return (
    <section className="card" aria-labelledby="wallet-top-up">
      <h2 id="wallet-top-up">Buy AI credits</h2>
      <p className="muted">
        Credits pay for AI use beyond your plan's allowance; they are bought by card at the checkout, not from this
        wallet. The balance is on the <Link to="/billing">billing</Link> page.
      </p>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          if (valid) window.location.assign(`/api/wallet/top-up?amount=${encodeURIComponent(amount)}`);
        }}
      >
        <Field
          label="Amount (USD)"
          inputMode="decimal"
          value={amount}
          onChange={(event) => setAmount(event.target.value)}
          error={valid ? undefined : 'From 5 to 1000, at most two decimals'}
        />
        <Button type="submit" disabled={!valid}>
          Buy credits
        </Button>
      </form>
    </section>
  );
}
