import canonicalizeModule from 'canonicalize';
import {
  getAddress,
  hashMessage,
  hashTypedData,
  isAddressEqual,
  recoverAddress,
  type Hex,
  type PublicClient,
} from 'viem';
import { BUS_MESSAGE_DOMAIN, BUS_MESSAGE_TYPES } from '@agentyard/proto-schemas';
import { BridgeErrors } from '../errors.ts';

// canonicalize is CommonJS whose types declare an ES default export; at runtime the default import is the function.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

export type BusSignatureScheme = 'eip712' | 'eip191';

export interface SignedBusFields {
  messageId: string;
  action: string;
  fromAgentId: string;
  toAgentId: string;
  payload: Record<string, unknown>;
  timestamp: number;
}

/** The EIP-712 typed data a bus message is signed as; `payload` is its RFC 8785 canonical JSON. */
export function busTypedData(message: SignedBusFields, chainId: number) {
  return {
    domain: { ...BUS_MESSAGE_DOMAIN, chainId },
    types: BUS_MESSAGE_TYPES,
    primaryType: 'BusMessage' as const,
    message: {
      messageId: message.messageId,
      action: message.action,
      fromAgentId: message.fromAgentId,
      toAgentId: message.toAgentId,
      payload: canonicalize(message.payload) ?? '{}',
      timestamp: BigInt(message.timestamp),
    },
  };
}

/** The text an EIP-191 (personal_sign) bus signature is made over: a title line, then the RFC 8785 canonical JSON of the whole message and the chain id. */
export function busSignedText(message: SignedBusFields, chainId: number): string {
  const { messageId, action, fromAgentId, toAgentId, payload, timestamp } = message;
  return `${BUS_MESSAGE_DOMAIN.name} message\n${canonicalize({ chainId, messageId, action, fromAgentId, toAgentId, payload, timestamp })}`;
}

export function busMessageHash(message: SignedBusFields, scheme: BusSignatureScheme, chainId: number): Hex {
  return scheme === 'eip191'
    ? hashMessage(busSignedText(message, chainId))
    : hashTypedData(busTypedData(message, chainId));
}

/** viem reports a failed validator call as an invalid signature; a chain that cannot answer at all is told apart by asking it something trivial. */
async function requireReachable(chain: PublicClient): Promise<void> {
  try {
    await chain.getChainId();
  } catch {
    throw BridgeErrors.chainUnavailable();
  }
}

/**
 * Whether `signer` signed the message. A plain ECDSA signature by an account is recovered locally;
 * anything else is asked of the chain: ERC-1271 `isValidSignature` of a deployed smart wallet, or
 * an ERC-6492 signature of a wallet not deployed yet (viem's deployless validator). An unreachable
 * chain is a 502, not a forged signature.
 */
export async function isSignedBy(
  chain: PublicClient,
  chainId: number,
  message: SignedBusFields & { signature: string; signatureScheme?: BusSignatureScheme },
  signer: string,
): Promise<boolean> {
  const address = getAddress(signer);
  const hash = busMessageHash(message, message.signatureScheme ?? 'eip712', chainId);
  const signature = message.signature as Hex;
  if (signature.length === 132) {
    try {
      if (isAddressEqual(await recoverAddress({ hash, signature }), address)) return true;
    } catch {
      /* not a recoverable ECDSA signature: ask the chain */
    }
  }
  let valid: boolean;
  try {
    valid = await chain.verifyHash({ address, hash, signature });
  } catch {
    valid = false;
  }
  if (!valid) await requireReachable(chain);
  return valid;
}
