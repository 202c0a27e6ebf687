import t from 'tap';
import { startChain, startPlatform, systemDb, uniqueEmail } from '@agentyard/testing';
import { erc20Abi, parseEther, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { checkPage, consoleContext, launchBrowser, noBrowser, watchPolicy } from './support/browser.ts';

// The console's wallet page in Debian's Chromium, signed in, against the real services behind the
// edge and a real local chain: the linked wallet's balances and USDC transfers as read from the
// chain, buying credits (to the development checkout), and a user with no wallet linked; axe-core
// (no serious or critical violation) at desktop and phone widths, a screenshot each.
t.setTimeout(300_000);

t.test(
  'the wallet page: balances and transfers from the chain, buying credits, no wallet yet',
  { skip: noBrowser },
  async (t) => {
    const chain = await startChain();
    t.teardown(() => chain.stop());
    const usdc = await chain.deployToken({ name: 'USD Coin', symbol: 'USDC', decimals: 6 });
    const platform = await startPlatform(['auth', 'ai', 'bridge'], {
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-e2e-wallet-console`,
      UNDERGROUND_RPC_URL: chain.rpcUrl,
      UNDERGROUND_CHAIN_ID: String(chain.chainId),
      USDC_CONTRACT_ADDRESS: usdc,
      BILLING_PROVIDER: 'local',
      RATE_LIMITS: 'web-register=1000',
    });
    t.teardown(() => platform.stop());

    // A wallet with coins, one USDC transfer out, linked to the user as wallet sign-in links it.
    const holder = privateKeyToAccount(generatePrivateKey());
    const funder = chain.accounts[0]!;
    const friend = chain.accounts[1]!.address;
    const receipt = (hash: `0x${string}`) => chain.publicClient.waitForTransactionReceipt({ hash });
    await receipt(
      await chain
        .walletClient(funder)
        .sendTransaction({ account: funder, chain: null, to: holder.address, value: parseEther('1.25') }),
    );
    await chain.mint(usdc, holder.address, parseUnits('42.5', 6));
    await receipt(
      await chain.walletClient(holder).writeContract({
        account: holder,
        chain: null,
        address: usdc,
        abi: erc20Abi,
        functionName: 'transfer',
        args: [friend, parseUnits('2.5', 6)],
      }),
    );

    const password = 'a wallet console password';
    const signUp = async () => {
      const email = uniqueEmail('wallet-console');
      const res = await fetch(`${platform.webUrl}/api/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      t.equal(res.status, 201);
      return {
        email,
        id: (await systemDb().selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id,
      };
    };
    const owner = await signUp();
    await systemDb()
      .insertInto('provider_accounts')
      .values({
        user_id: owner.id,
        provider: 'wallet',
        provider_subject: holder.address.toLowerCase(),
        email: null,
        updated_at: new Date(),
      })
      .execute();
    const walletless = await signUp();

    const browser = await launchBrowser(t);
    for (const width of [1280, 375]) {
      // At PUBLIC_BASE_URL, what the checkout's redirects name.
      const context = await consoleContext(browser, {
        webUrl: platform.webUrl,
        publicBaseUrl: platform.env.PUBLIC_BASE_URL!.replace(/\/$/, ''),
        width,
        height: 900,
      });
      const page = await context.newPage();
      const refusals = watchPolicy(page);
      const check = async (name: string) => {
        const result = await checkPage(page, 'wallet-console', `${name}-${width}`);
        t.same(
          result.violations,
          [],
          `${name} at ${width} px: no serious or critical axe violation (${result.screenshot})`,
        );
      };
      const signIn = async (email: string) => {
        await page.goto('/login');
        await page.getByLabel('Email').fill(email);
        await page.getByLabel('Password').fill(password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(/\/dashboard/);
      };

      await signIn(owner.email);
      await page.goto('/wallet');
      await page.getByRole('heading', { name: 'Wallet', level: 1 }).waitFor();
      await page.getByText('42.5', { exact: false }).first().waitFor();
      const balances = await page.getByRole('region', { name: 'Balances' }).textContent();
      t.match(balances, /ETH\s*1\.2\d*/, 'the native balance, less the gas of the transfer');
      t.match(balances, /USDC\s*40/, 'the USDC balance after the transfer out');
      t.match(
        balances,
        new RegExp(`${holder.address.slice(0, 6)}…${holder.address.slice(-4)}`),
        'the linked address, shortened',
      );
      const transfers = await page.getByRole('region', { name: 'USDC transfers' }).textContent();
      t.match(transfers, /Sent\s*2\.5 USDC/, 'the transfer out');
      t.match(transfers, /Received\s*42\.5 USDC/, 'the mint in');
      await check('wallet');

      await page.getByLabel('Amount (USD)').fill('3');
      t.ok(
        await page.getByRole('button', { name: 'Buy credits' }).isDisabled(),
        'under the smallest purchase: not offered',
      );
      await page.getByLabel('Amount (USD)').fill('12.5');
      // What the button asks for, and the edge's answer: the credits checkout (its page is the billing tests').
      const asked = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/wallet/top-up');
      await page.getByRole('button', { name: 'Buy credits' }).click();
      const answer = await asked;
      t.equal(new URL(answer.url()).searchParams.get('amount'), '12.5', 'for the amount asked');
      t.equal(answer.status(), 303);
      t.match(
        new URL(answer.headers().location!).pathname,
        /^\/api\/billing\/local-checkout\//,
        'to the development checkout',
      );

      await page.goto('/dashboard');
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/login/);
      await signIn(walletless.email);
      await page.goto('/wallet');
      await page.getByRole('heading', { name: 'No wallet linked' }).waitFor();
      t.ok(await page.getByRole('button', { name: 'Buy credits' }).isVisible(), 'credits can still be bought');
      await check('wallet-none');

      t.same(refusals, [], `no Content-Security-Policy refusal or page error at ${width} px`);
      await context.close();
    }
  },
);
