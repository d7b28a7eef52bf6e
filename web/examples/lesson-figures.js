// A static site (MkDocs, Jekyll, Hugo, Docusaurus...) writes the figure in its markdown as a
// placeholder, <div class="lesson-figure" data-figure="attention-playground" data-seed="3"></div>,
// and this script turns each one into the element: every data-* attribute but data-figure becomes
// an attribute of the element (data-solved-at="0.5" -> solved-at="0.5"). Placeholders that appear
// later, as client-side navigation adds a page, are turned too.
import '../attention-playground.js';

const PLACEHOLDER = '.lesson-figure[data-figure="attention-playground"]';

function mount(placeholder) {
  if (placeholder.querySelector('attention-playground')) return;
  const figure = document.createElement('attention-playground');
  for (const { name, value } of placeholder.attributes) {
    if (name.startsWith('data-') && name !== 'data-figure') figure.setAttribute(name.slice(5), value);
  }
  placeholder.replaceChildren(figure);
}

function mountAll(root) {
  if (root.matches?.(PLACEHOLDER)) mount(root);
  root.querySelectorAll?.(PLACEHOLDER).forEach(mount);
}

mountAll(document);
new MutationObserver((changes) => {
  for (const change of changes) for (const node of change.addedNodes) mountAll(node);
}).observe(document.documentElement, { childList: true, subtree: true });
