import { parse, type DefaultTreeAdapterTypes } from 'parse5';

type Node = DefaultTreeAdapterTypes.ChildNode | DefaultTreeAdapterTypes.Document;
type Element = DefaultTreeAdapterTypes.Element;

/** What a page says, for reading and summarizing. */
export interface PageText {
  title: string;
  description: string;
  headings: { level: number; text: string }[];
  paragraphs: string[];
  wordCount: number;
}

/** What a page points at and declares. */
export interface PageParts {
  links: { href: string; text: string }[];
  images: { src: string; alt: string }[];
  meta: Record<string, string>;
}

/** Bounds on what one answer holds, whatever the page's size. */
const MOST = { headings: 200, paragraphs: 300, links: 500, images: 200, meta: 100, text: 2000 } as const;

/** Elements whose text is not the page's prose. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'iframe', 'object']);
const HEADING = /^h([1-6])$/;

const isElement = (node: Node): node is Element => 'tagName' in node;
const attr = (element: Element, name: string) => element.attrs.find((a) => a.name === name)?.value ?? '';
const squeeze = (text: string) => text.replace(/\s+/g, ' ').trim();
const clip = (text: string) => (text.length > MOST.text ? `${text.slice(0, MOST.text - 1)}…` : text);
const wordsIn = (text: string) => (text.match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? []).length;

/** Elements that break text: their text never runs into a neighbour's ("one</li><li>two"). */
const BLOCKS = new Set(
  'address article aside blockquote br dd div dl dt figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section table td th tr ul'.split(
    ' ',
  ),
);

function textOf(node: Node): string {
  if (node.nodeName === '#text') return (node as DefaultTreeAdapterTypes.TextNode).value;
  if (isElement(node) && SKIPPED.has(node.tagName)) return '';
  const children = 'childNodes' in node ? node.childNodes : [];
  return children
    .map((child) => (isElement(child) && BLOCKS.has(child.tagName) ? ` ${textOf(child)} ` : textOf(child)))
    .join('');
}

function* elements(node: Node): Generator<Element> {
  if (isElement(node)) {
    if (SKIPPED.has(node.tagName)) return;
    yield node;
  }
  const children = isElement(node) && node.tagName === 'template' ? [] : 'childNodes' in node ? node.childNodes : [];
  for (const child of children) yield* elements(child);
}

/** An absolute http(s) URL for a page's reference, or null (javascript:, data:, mailto: are not followed anywhere, so they are left out). */
function absolute(reference: string, base: URL): string | null {
  if (!reference.trim()) return null;
  try {
    const url = new URL(reference.trim(), base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : null;
  } catch {
    return null;
  }
}

/** The base references resolve against: the page's own `<base href>` when it is http(s), else its URL. */
function baseOf(document: DefaultTreeAdapterTypes.Document, pageUrl: string): URL {
  const page = new URL(pageUrl);
  for (const element of elements(document))
    if (element.tagName === 'base' && attr(element, 'href'))
      return new URL(absolute(attr(element, 'href'), page) ?? page);
  return page;
}

/** The title, description, headings and paragraphs of an HTML page (parsed as a browser would, by parse5). */
export function readPage(html: string): PageText {
  const document = parse(html);
  let title = '';
  let description = '';
  let ogDescription = '';
  const headings: PageText['headings'] = [];
  const paragraphs: string[] = [];
  let wordCount = 0;
  /** Depth first; a block taken as a paragraph is not looked into again, so its text counts once. */
  const visit = (node: Node): void => {
    if (isElement(node)) {
      const tag = node.tagName;
      if (SKIPPED.has(tag)) return;
      if (tag === 'body') wordCount = wordsIn(textOf(node));
      if (tag === 'title' && !title) title = squeeze(textOf(node));
      else if (tag === 'meta') {
        const name = (attr(node, 'name') || attr(node, 'property')).toLowerCase();
        if (name === 'description' && !description) description = squeeze(attr(node, 'content'));
        if (name === 'og:description' && !ogDescription) ogDescription = squeeze(attr(node, 'content'));
      } else if (HEADING.test(tag)) {
        const text = squeeze(textOf(node));
        if (text && headings.length < MOST.headings)
          headings.push({ level: Number(HEADING.exec(tag)![1]), text: clip(text) });
        return;
      } else if (tag === 'p' || tag === 'li' || tag === 'blockquote' || tag === 'pre') {
        const text = squeeze(textOf(node));
        if (text && paragraphs.length < MOST.paragraphs) paragraphs.push(clip(text));
        return;
      }
    }
    if ('childNodes' in node) for (const child of node.childNodes) visit(child);
  };
  visit(document);
  return { title: clip(title), description: clip(description || ogDescription), headings, paragraphs, wordCount };
}

/** The links, images and meta tags of an HTML page, with references made absolute. */
export function extractParts(html: string, pageUrl: string): PageParts {
  const document = parse(html);
  const base = baseOf(document, pageUrl);
  const links: PageParts['links'] = [];
  const images: PageParts['images'] = [];
  const meta: Record<string, string> = {};
  const seenLinks = new Set<string>();
  for (const element of elements(document)) {
    if (element.tagName === 'a' && links.length < MOST.links) {
      const href = absolute(attr(element, 'href'), base);
      if (href && !seenLinks.has(href)) {
        seenLinks.add(href);
        links.push({ href, text: clip(squeeze(textOf(element))) });
      }
    } else if (element.tagName === 'img' && images.length < MOST.images) {
      const src = absolute(attr(element, 'src'), base);
      if (src) images.push({ src, alt: clip(squeeze(attr(element, 'alt'))) });
    } else if (element.tagName === 'meta' && Object.keys(meta).length < MOST.meta) {
      const name = (attr(element, 'name') || attr(element, 'property')).toLowerCase().slice(0, 100);
      const content = attr(element, 'content');
      if (name && content && !(name in meta)) meta[name] = clip(squeeze(content));
    }
  }
  return { links, images, meta };
}
