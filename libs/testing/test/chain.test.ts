import t from 'tap';
import { erc20Abi, isErc6492Signature, parseAbi, type Address } from 'viem';
import { startChain, type Chain } from '@agentyard/testing';

t.setTimeout(120_000);

let chain: Chain;
t.before(async () => {
  chain = await startChain();
});
t.teardown(() => chain?.stop());

t.test('the chain answers on loopback as 31337 with at least five funded dev accounts', async (t) => {
  t.match(chain.rpcUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.equal(chain.chainId, 31337);
  t.equal(await chain.publicClient.getChainId(), 31337);
  t.ok(chain.accounts.length >= 5);
  t.equal(new Set(chain.accounts.map((a) => a.address)).size, chain.accounts.length);
  for (const account of chain.accounts.slice(0, 5))
    t.ok(
      (await chain.publicClient.getBalance({ address: account.address })) > 10n ** 21n,
      `${account.address} is funded`,
    );
});

t.test('a token: deploy, mint, balanceOf and transfer read back through viem', async (t) => {
  const [, holder, other] = chain.accounts;
  const token = await chain.deployToken({ name: 'USD Coin', symbol: 'USDC', decimals: 6 });
  const read = (functionName: 'name' | 'symbol' | 'decimals' | 'totalSupply') =>
    chain.publicClient.readContract({ address: token, abi: erc20Abi, functionName });
  const balanceOf = (address: Address) =>
    chain.publicClient.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [address] });
  t.equal(await read('name'), 'USD Coin');
  t.equal(await read('symbol'), 'USDC');
  t.equal(await read('decimals'), 6);
  t.equal(await balanceOf(holder!.address), 0n);

  await chain.mint(token, holder!.address, 1_500_000n);
  t.equal(await balanceOf(holder!.address), 1_500_000n);
  t.equal(await read('totalSupply'), 1_500_000n);

  // Concurrent mints from the deployer get consecutive nonces.
  await Promise.all([
    chain.mint(token, other!.address, 1n),
    chain.mint(token, other!.address, 2n),
    chain.mint(token, other!.address, 3n),
  ]);
  t.equal(await balanceOf(other!.address), 6n);

  const wallet = chain.walletClient(holder!);
  const hash = await wallet.writeContract({
    address: token,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [other!.address, 500_000n],
    account: holder!,
    chain: null,
  });
  t.equal((await chain.publicClient.waitForTransactionReceipt({ hash })).status, 'success');
  t.equal(await balanceOf(holder!.address), 1_000_000n);
  t.equal(await balanceOf(other!.address), 500_006n);

  await t.rejects(
    wallet.writeContract({
      address: token,
      abi: parseAbi(['function mint(address to, uint256 amount)']),
      functionName: 'mint',
      args: [holder!.address, 1n],
      account: holder!,
      chain: null,
    }),
    /only the deployer mints/,
    'only the deployer may mint',
  );
  await t.rejects(
    wallet.writeContract({
      address: token,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [other!.address, 2_000_000n],
      account: holder!,
      chain: null,
    }),
    /balance too low/,
  );
  t.equal(await balanceOf(holder!.address), 1_000_000n, 'failed calls changed nothing');
  t.equal(await read('totalSupply'), 1_500_006n);
});

t.test('verifyMessage accepts an EOA signature and rejects another signer', async (t) => {
  const [alice, bob] = chain.accounts;
  const message = 'Sign in to Agentyard\nnonce: 4f1c2b, ✓ ünïcode';
  const signature = await alice!.signMessage({ message });
  t.equal(await chain.publicClient.verifyMessage({ address: alice!.address, message, signature }), true);
  t.equal(await chain.publicClient.verifyMessage({ address: bob!.address, message, signature }), false);
  t.equal(
    await chain.publicClient.verifyMessage({ address: alice!.address, message: `${message}!`, signature }),
    false,
  );
});

t.test('verifyMessage accepts a deployed ERC-1271 smart wallet signature from its owner only', async (t) => {
  const [, owner, stranger] = chain.accounts;
  const wallet = await chain.deploySmartWallet(owner!);
  t.not((await chain.publicClient.getCode({ address: wallet })) ?? '0x', '0x');
  const message = 'Sign in to Agentyard with a smart wallet';
  const signature = await chain.signAsSmartWallet(owner!, message, { address: wallet });
  t.notOk(isErc6492Signature(signature), 'a deployed wallet gets a plain signature');
  t.equal(await chain.publicClient.verifyMessage({ address: wallet, message, signature }), true);
  t.equal(await chain.publicClient.verifyMessage({ address: wallet, message: 'another message', signature }), false);

  const forged = await chain.signAsSmartWallet(stranger!, message, { address: wallet });
  t.equal(await chain.publicClient.verifyMessage({ address: wallet, message, signature: forged }), false);
  t.equal(await chain.publicClient.verifyMessage({ address: owner!.address, message, signature: forged }), false);
});

t.test('verifyMessage accepts an ERC-6492 signature of a counterfactual wallet, which stays undeployed', async (t) => {
  const [, , owner, stranger] = chain.accounts;
  const cf = await chain.counterfactualSmartWallet(owner!, 7n);
  t.equal(await chain.publicClient.getCode({ address: cf.address }), undefined, 'not deployed yet');

  t.not(
    (await chain.counterfactualSmartWallet(owner!)).address,
    (await chain.counterfactualSmartWallet(owner!)).address,
    'a random salt by default',
  );
  t.equal((await chain.counterfactualSmartWallet(owner!, 7n)).address, cf.address, 'the same salt, the same address');

  const message = 'Sign in to Agentyard before deploying';
  const signature = await chain.signAsSmartWallet(owner!, message, cf);
  t.ok(isErc6492Signature(signature), 'wrapped for ERC-6492');
  t.equal(await chain.publicClient.verifyMessage({ address: cf.address, message, signature }), true);
  t.equal(
    await chain.publicClient.getCode({ address: cf.address }),
    undefined,
    'verification only simulated the deployment',
  );

  const forged = await chain.signAsSmartWallet(stranger!, message, cf);
  t.equal(await chain.publicClient.verifyMessage({ address: cf.address, message, signature: forged }), false);
  t.equal(
    await chain.publicClient.verifyMessage({ address: cf.address, message: 'another message', signature }),
    false,
  );

  await t.rejects(
    chain.signAsSmartWallet(owner!, message, { address: cf.address }),
    /not deployed/,
    'an undeployed wallet without its factory cannot be signed for',
  );

  // Deploying it through the factory calldata (twice: the factory call is idempotent) makes it a plain ERC-1271 wallet.
  const deployer = chain.walletClient(chain.accounts[4]!);
  for (let i = 0; i < 2; i++) {
    const hash = await deployer.sendTransaction({
      to: cf.factory,
      data: cf.factoryData,
      account: chain.accounts[4]!,
      chain: null,
    });
    t.equal((await chain.publicClient.waitForTransactionReceipt({ hash })).status, 'success');
  }
  t.not(
    (await chain.publicClient.getCode({ address: cf.address })) ?? '0x',
    '0x',
    'the factory deployed it at the promised address',
  );
  const plain = await chain.signAsSmartWallet(owner!, message, cf);
  t.notOk(isErc6492Signature(plain));
  t.equal(await chain.publicClient.verifyMessage({ address: cf.address, message, signature: plain }), true);
  t.equal(
    await chain.publicClient.verifyMessage({ address: cf.address, message, signature }),
    true,
    'the wrapped signature still verifies once deployed',
  );
});

t.test('chains run side by side on their own ports, and stop() ends one', async (t) => {
  const [first, second] = await Promise.all([startChain(), startChain()]);
  t.teardown(() => Promise.all([first.stop(), second.stop()]));
  t.not(first.rpcUrl, second.rpcUrl);
  t.not(first.rpcUrl, chain.rpcUrl);
  const token = await first.deployToken({ name: 'Other', symbol: 'OTH', decimals: 18 });
  t.equal(
    await second.publicClient.getCode({ address: token }),
    undefined,
    'a deployment on one chain is not on the other',
  );
  await first.stop();
  await t.rejects(
    fetch(first.rpcUrl, { method: 'POST', body: '{}', signal: AbortSignal.timeout(2000) }),
    'the stopped node no longer answers',
  );
  t.equal(await second.publicClient.getChainId(), 31337);
});
