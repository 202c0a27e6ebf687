import t from 'tap';
import { createSiweMessage } from 'viem/siwe';
import { parseEther, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startChain, startLocalProviders, startPageServer, startPlatform } from '@agentyard/testing';
import { payAtLocalCheckout, WebClient } from './support/journey.ts';

// Issue 32's gateway routing, summarizer and wallet as a user meets them through the real edge:
// sign in with a wallet on a local chain (hardhat) and see its balances; pay, buy credits from the
// wallet page; call /api/v1/gateway (generate-text, summarize) and find each fee in the credits
// ledger; read a local page and be refused one that redirects to a private address. Solo includes
// no AI allowance here, so every charge is taken from credits. The `agent` plugin with a real
// OpenClaw agent: gateway-agent-journey.test.ts.
t.setTimeout(300_000);

t.test(
  'a wallet user sees their balances, buys credits, calls the gateway and the summarizer, and pays for each call',
  async (t) => {
    const chain = await startChain();
    t.teardown(() => chain.stop());
    const usdc = await chain.deployToken({ name: 'USD Coin', symbol: 'USDC', decimals: 6 });
    const model = await startLocalProviders(t);
    const pages = await startPageServer(t);
    const platform = await startPlatform(['auth', 'ai', 'bridge'], {
      BASE_RPC_URL: chain.rpcUrl,
      BASE_CHAIN_ID: String(chain.chainId),
      UNDERGROUND_RPC_URL: chain.rpcUrl,
      UNDERGROUND_CHAIN_ID: String(chain.chainId),
      USDC_CONTRACT_ADDRESS: usdc,
      OPENAI_BASE_URL: model.env.OPENAI_BASE_URL,
      OPENAI_API_KEY: model.env.OPENAI_API_KEY,
      BILLING_PROVIDER: 'local',
      PLAN_MONTHLY_ALLOWANCE_USD: 'solo:0,collective:15,label:40,network:150',
      GATEWAY_PLUGIN_PRICES_USD: 'agent:0.01,generate-text:0.002,summarize:0.003',
      PAGE_FETCH_TEST_HOSTS: pages.host,
      GATEWAY_CORS_ORIGINS: 'https://scripts.example.test',
    });
    t.teardown(() => platform.stop());
    const web = new WebClient(platform.webUrl, platform.env.PUBLIC_BASE_URL!);

    // 1. A wallet with coins on the chain signs in (Sign-In With Ethereum), which links it.
    const holder = privateKeyToAccount(generatePrivateKey());
    const funder = chain.accounts[0]!;
    await chain.publicClient.waitForTransactionReceipt({
      hash: await chain
        .walletClient(funder)
        .sendTransaction({ account: funder, chain: null, to: holder.address, value: parseEther('2') }),
    });
    await chain.mint(usdc, holder.address, parseUnits('42.5', 6));
    const { nonce } = (await (await web.request('POST', '/api/auth/nonce')).json()) as { nonce: string };
    const message = createSiweMessage({
      address: holder.address,
      chainId: chain.chainId,
      domain: new URL(web.publicBaseUrl).host,
      nonce,
      uri: web.publicBaseUrl,
      version: '1',
      statement: 'Sign in to Agentyard',
      issuedAt: new Date(),
    });
    const signedIn = await web.request('POST', '/api/wallet-auth', {
      address: holder.address,
      message,
      signature: await holder.signMessage({ message }),
    });
    t.equal(signedIn.status, 200, 'signed in with the wallet');

    // 2. The wallet page: the linked address, its ETH and USDC from the chain, the mint among its transfers.
    t.match(await (await web.request('GET', '/api/wallet/address')).json(), { address: holder.address });
    const wallet = await web.request('GET', '/api/wallet');
    t.equal(wallet.status, 200);
    t.has(await wallet.json(), {
      address: holder.address,
      chainId: chain.chainId,
      native: { symbol: 'ETH', balance: '2' },
      usdc: { balance: '42.5' },
      transfers: [{ direction: 'in', amount: '42.5', token: 'USDC' }],
    });

    // 3. Pay for solo, then buy $5 of credits from the wallet page's top-up (the credits checkout).
    t.equal(await payAtLocalCheckout(web, 'solo'), 303, 'subscribed at the development checkout');
    const topUp = await web.request('GET', '/api/wallet/top-up?amount=5');
    t.equal(topUp.status, 303);
    t.equal((await web.submitForm(new URL(topUp.headers.get('location')!).pathname)).status, 303, 'paid');
    const ledger = async () =>
      (await (await web.request('GET', '/api/credits')).json()) as {
        balanceUsd: number;
        entries: { kind: string; amountUsd: number }[];
      };
    t.equal((await ledger()).balanceUsd, 5, 'five dollars of credits');

    // 4. generate-text through the gateway: the model's answer, and its fee taken from credits.
    const generated = await web.request('POST', '/api/v1/gateway', {
      plugin: 'generate-text',
      input: 'One line about quinces',
    });
    t.equal(generated.status, 200);
    const answer = (await generated.json()) as {
      output: string;
      payment: { method: string; chargedUsd: number; balanceUsd: number };
    };
    t.match(answer, { output: 'Hello from the local provider', payment: { method: /^credits$/, chargedUsd: 0.002 } });
    const afterText = await ledger();
    t.equal(afterText.balanceUsd, answer.payment.balanceUsd, "the answer's balance is the ledger's");
    t.ok(afterText.balanceUsd <= 5 - 0.002, 'at least the fee was taken');
    t.ok(
      afterText.entries.some((e) => e.kind === 'usage' && e.amountUsd < 0),
      'a usage entry in the ledger',
    );

    // 5. The summarizer: a local page read; one that redirects to a private address refused.
    const read = await web.request('POST', '/api/summarize', { url: `${pages.origin}/article` });
    t.equal(read.status, 200);
    t.match(await read.json(), {
      title: 'Quince preserves',
      headings: [{ level: 1, text: 'Quince preserves' }],
      wordCount: Number,
    });
    const refused = await web.request('POST', '/api/summarize', { url: `${pages.origin}/to-private` });
    t.equal(refused.status, 400);
    t.has(await refused.json(), { code: 'URL_REFUSED' });

    // 6. summarize through the gateway, named by header: the summary, and its fee.
    const summarized = await web.request(
      'POST',
      '/api/v1/gateway',
      { input: `${pages.origin}/article` },
      { headers: { 'x-plugin-id': 'summarize' } },
    );
    t.equal(summarized.status, 200);
    const summary = (await summarized.json()) as {
      url: string;
      output: string;
      payment: { chargedUsd: number; balanceUsd: number };
    };
    t.match(summary, {
      url: `${pages.origin}/article`,
      output: 'Hello from the local provider',
      payment: { method: /^credits$/, chargedUsd: 0.003 },
    });
    t.ok(summary.payment.balanceUsd < afterText.balanceUsd - 0.003 + 1e-9, 'the fee (and the summary) taken');
    t.equal((await ledger()).balanceUsd, summary.payment.balanceUsd);

    // 7. An unknown plugin is a 400, and the gateway's scope counts the call (100 per minute).
    const unknown = await web.request('POST', '/api/v1/gateway', { plugin: 'image-generation', input: 'x' });
    t.equal(unknown.status, 400);
    t.equal(unknown.headers.get('ratelimit-limit'), '100');

    // 8. A browser page of the configured origin may call it cross-origin; another origin may not.
    const preflight = (origin: string) =>
      fetch(`${platform.webUrl}/api/v1/gateway`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
    const allowed = await preflight('https://scripts.example.test');
    t.equal(allowed.status, 204, 'the preflight of the configured origin');
    t.equal(allowed.headers.get('access-control-allow-origin'), 'https://scripts.example.test');
    const other = await preflight('https://elsewhere.example.test');
    t.equal(other.status, 403, 'any other origin is refused');
    t.equal(other.headers.get('access-control-allow-origin'), null);
  },
);
