// A real local EVM chain for tests: `hardhat node` (hardhat@2) on a free loopback port, with an
// ERC-20, an ERC-1271 smart wallet and its CREATE2 factory compiled offline by solc-js.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  http,
  serializeErc6492Signature,
  isAddressEqual,
  type Abi,
  type Address,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type WalletClient,
} from 'viem';
import { createNonceManager, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { hardhat } from 'viem/chains';
import { jsonRpc } from 'viem/nonce';

export interface Chain {
  /** http://127.0.0.1:<free port> */
  rpcUrl: string;
  /** 31337 */
  chainId: number;
  /** Funded dev accounts (10 000 ETH each); accounts[0] deploys and mints the helpers' contracts */
  accounts: PrivateKeyAccount[];
  publicClient: PublicClient;
  walletClient(account: PrivateKeyAccount): WalletClient;
  /** Deploys an ERC-20 with `decimals` (a USDC-like token: 6) and returns its address */
  deployToken(options: { name: string; symbol: string; decimals: number }): Promise<Address>;
  /** Mints `amount` base units of `token` to `to` (mined before it resolves) */
  mint(token: Address, to: Address, amount: bigint): Promise<void>;
  /** A deployed ERC-1271 smart-contract wallet owned by `owner` (isValidSignature accepts owner's EIP-191 signatures of the hash) */
  deploySmartWallet(owner: PrivateKeyAccount): Promise<Address>;
  /**
   * A counterfactual (not yet deployed) smart wallet for ERC-6492: its future address and the
   * factory + calldata that deploys it. Without `salt`, a random one: a fresh address every call.
   */
  counterfactualSmartWallet(
    owner: PrivateKeyAccount,
    salt?: bigint,
  ): Promise<{ address: Address; factory: Address; factoryData: Hex }>;
  /**
   * Signs `message` (EIP-191 personal_sign) as the smart wallet's owner, wrapped for the wallet:
   * plain when the wallet has code on the chain, ERC-6492-wrapped with `factory` + `factoryData`
   * when it has none yet.
   */
  signAsSmartWallet(
    owner: PrivateKeyAccount,
    message: string,
    wallet: { address: Address; factory?: Address; factoryData?: Hex },
  ): Promise<Hex>;
  stop(): Promise<void>;
}

// Hardhat's built-in, publicly known development mnemonic: the node funds the accounts derived from it.
const HARDHAT_MNEMONIC = 'test test test test test test test test test test test junk';
const ACCOUNT_COUNT = 10;
const START_TIMEOUT_MS = 30_000;
const RPC_TIMEOUT_MS = 10_000;
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const contractsDir = join(packageDir, 'contracts');

interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
}
interface Contracts {
  TestToken: CompiledContract;
  SmartWallet: CompiledContract;
  SmartWalletFactory: CompiledContract;
}

let contractsOnce: Promise<Contracts> | undefined;
/** Compiled once per process: solc-js takes a while. */
function contracts(): Promise<Contracts> {
  contractsOnce ??= compileContracts();
  return contractsOnce;
}

async function compileContracts(): Promise<Contracts> {
  const names = ['TestToken', 'SmartWallet', 'SmartWalletFactory'] as const;
  const sources: Record<string, { content: string }> = {};
  for (const name of names)
    sources[`${name}.sol`] = { content: await readFile(join(contractsDir, `${name}.sol`), 'utf8') };
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      evmVersion: 'cancun',
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`solc: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const pick = (name: (typeof names)[number]): CompiledContract => {
    const contract = output.contracts?.[`${name}.sol`]?.[name];
    if (!contract) throw new Error(`solc produced no ${name}`);
    return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
  };
  return {
    TestToken: pick('TestToken'),
    SmartWallet: pick('SmartWallet'),
    SmartWalletFactory: pick('SmartWalletFactory'),
  };
}

let devKeysOnce: Hex[] | undefined;
function devPrivateKeys(): Hex[] {
  devKeysOnce ??= Array.from({ length: ACCOUNT_COUNT }, (_, addressIndex): Hex => {
    const key = mnemonicToAccount(HARDHAT_MNEMONIC, { addressIndex }).getHdKey().privateKey;
    if (!key) throw new Error('hardhat dev key derivation gave no private key');
    return `0x${Buffer.from(key).toString('hex')}`;
  });
  return devKeysOnce;
}

/**
 * Starts `hardhat node` on a free loopback port and resolves once it answers JSON-RPC. Each call
 * is its own chain (own process, port and nonce tracking); stop() ends it.
 */
export async function startChain(): Promise<Chain> {
  const workDir = await mkdtemp(join(tmpdir(), 'agentyard-chain-'));
  const configPath = join(workDir, 'hardhat.config.js');
  await writeFile(configPath, 'module.exports = {};\n');
  const hardhatCli = createRequire(import.meta.url).resolve('hardhat/internal/cli/bootstrap.js');
  // The working directory stays inside this package: hardhat refuses to run unless it resolves
  // itself from there (HH12); the config, and whatever hardhat writes next to it, live in workDir.
  const child = spawn(
    process.execPath,
    [hardhatCli, 'node', '--config', configPath, '--hostname', '127.0.0.1', '--port', '0'],
    {
      cwd: packageDir,
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const killOnExit = () => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      await new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      });
    }
    await rm(workDir, { recursive: true, force: true });
  };

  try {
    const keys = devPrivateKeys();
    void contracts().catch(() => undefined); // compile while the node boots; errors surface on first use
    const rpcUrl = await waitForRpc(child);
    return await connect(rpcUrl, keys, stop);
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Resolves with the node's URL once it printed it and answers eth_chainId. */
async function waitForRpc(child: ChildProcess): Promise<string> {
  let output = '';
  const started = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new Error(`hardhat node did not start within ${START_TIMEOUT_MS / 1000} s:\n${output.slice(-2000)}`)),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /Started HTTP and WebSocket JSON-RPC server at (http:\/\/[^\s/]+)\//.exec(output)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve(url);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`hardhat node exited (${code ?? signal}) before it listened:\n${output.slice(-2000)}`));
    });
  });
  const url = await started;
  // The node logs every request: keep draining its output so it never blocks on a full pipe.
  child.stdout?.removeAllListeners('data');
  child.stderr?.removeAllListeners('data');
  child.stdout?.resume();
  child.stderr?.resume();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
  });
  const { result } = (await response.json()) as { result?: string };
  if (result === undefined || Number(result) !== hardhat.id)
    throw new Error(`${url} answered eth_chainId with ${result}`);
  return url;
}

async function connect(rpcUrl: string, keys: Hex[], stop: () => Promise<void>): Promise<Chain> {
  const chain = defineChain({ ...hardhat, rpcUrls: { default: { http: [rpcUrl] } } });
  const transport = http(rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 0 });
  // One nonce manager per chain: concurrent sends from one account get consecutive nonces, and two
  // chains in one process (same chain id, same addresses) never share nonce state.
  const nonceManager = createNonceManager({ source: jsonRpc() });
  const accounts = keys.map((key) => privateKeyToAccount(key, { nonceManager }));
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 }) as PublicClient;
  const walletClient = (account: PrivateKeyAccount): WalletClient =>
    createWalletClient({ account, chain, transport, pollingInterval: 50 });

  const funded = await createWalletClient({ chain, transport }).getAddresses();
  for (const account of accounts) {
    if (!funded.some((address) => isAddressEqual(address, account.address)))
      throw new Error(`hardhat node does not fund ${account.address}`);
  }

  const deployer = accounts[0]!;
  const deployerClient = createWalletClient({ account: deployer, chain, transport, pollingInterval: 50 });
  // The deployer's transactions are submitted one at a time: hardhat's automining refuses a nonce
  // that arrives before its predecessor, which concurrent HTTP requests can do.
  let submitted: Promise<unknown> = Promise.resolve();
  const inOrder = (submit: () => Promise<Hex>): Promise<Hex> => {
    const hash = submitted.then(submit);
    submitted = hash.catch(() => undefined);
    return hash;
  };
  const mined = async (hash: Hex): Promise<TransactionReceipt> => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: RPC_TIMEOUT_MS });
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return receipt;
  };
  const deploy = async (contract: CompiledContract, args: readonly unknown[]): Promise<Address> => {
    const receipt = await mined(
      await inOrder(() => deployerClient.deployContract({ abi: contract.abi, bytecode: contract.bytecode, args })),
    );
    if (!receipt.contractAddress) throw new Error('deployment gave no contract address');
    return receipt.contractAddress;
  };
  let factoryOnce: Promise<Address> | undefined;
  const factory = async () => {
    factoryOnce ??= contracts().then((c) => deploy(c.SmartWalletFactory, []));
    return factoryOnce;
  };

  return {
    rpcUrl,
    chainId: chain.id,
    accounts,
    publicClient,
    walletClient,
    async deployToken({ name, symbol, decimals }) {
      return deploy((await contracts()).TestToken, [name, symbol, decimals]);
    },
    async mint(token, to, amount) {
      const { abi } = (await contracts()).TestToken;
      await mined(
        await inOrder(() =>
          deployerClient.writeContract({ address: token, abi, functionName: 'mint', args: [to, amount] }),
        ),
      );
    },
    async deploySmartWallet(owner) {
      return deploy((await contracts()).SmartWallet, [owner.address]);
    },
    async counterfactualSmartWallet(owner, salt = randomSalt()) {
      const { abi } = (await contracts()).SmartWalletFactory;
      const address = await factory();
      const wallet = (await publicClient.readContract({
        address,
        abi,
        functionName: 'getAddress',
        args: [owner.address, salt],
      })) as Address;
      return {
        address: wallet,
        factory: address,
        factoryData: encodeFunctionData({ abi, functionName: 'createAccount', args: [owner.address, salt] }),
      };
    },
    async signAsSmartWallet(owner, message, wallet) {
      const signature = await owner.signMessage({ message });
      const code = await publicClient.getCode({ address: wallet.address });
      if (code !== undefined && code !== '0x') return signature;
      if (!wallet.factory || !wallet.factoryData)
        throw new Error(
          `smart wallet ${wallet.address} is not deployed and no factory was given to wrap the signature for ERC-6492`,
        );
      return serializeErc6492Signature({ address: wallet.factory, data: wallet.factoryData, signature });
    },
    stop,
  };
}

function randomSalt(): bigint {
  return BigInt(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}`);
}
