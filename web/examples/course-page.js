// The lesson's own script: drives one <attention-playground> through its methods and the iframe
// through postMessage, and logs what each reports. Written as a lesson author would.
const MAX_LOG = 200;

function log(list, type, detail) {
  const li = document.createElement('li');
  li.dataset.type = type;
  li.dataset.detail = JSON.stringify(detail ?? null);
  const text = type === 'step' || type === 'solved' ? `step ${detail.step}, loss ${detail.loss.toFixed(4)}` : detail?.message ?? JSON.stringify(detail);
  li.textContent = `${type}: ${text}`;
  list.append(li);
  while (list.children.length > MAX_LOG) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

// ---- The element, through its API
const trainer = document.getElementById('trainer');
const trainerLog = document.getElementById('trainer-log');
for (const type of ['ready', 'step', 'solved', 'error']) {
  trainer.addEventListener(type, (e) => log(trainerLog, type, e.detail));
}
trainer.addEventListener('solved', (e) => {
  const goal = document.getElementById('trainer-goal');
  goal.textContent = `Solved: loss ${e.detail.loss.toFixed(3)} at step ${e.detail.step}. The heads have found the pattern.`;
  goal.classList.add('done');
  trainer.pause();
});
const actions = { play: () => trainer.play(), pause: () => trainer.pause(), step: () => trainer.step(50), reset: () => trainer.reset() };
for (const b of document.querySelectorAll('[data-el]')) b.addEventListener('click', () => actions[b.dataset.el]());

// ---- The iframe, through postMessage
const frame = document.getElementById('frame');
const frameLog = document.getElementById('frame-log');
const frameOrigin = new URL(frame.src, location.href).origin;
const send = (command) => frame.contentWindow.postMessage(command, frameOrigin);
window.addEventListener('message', (e) => {
  if (e.source !== frame.contentWindow || e.origin !== frameOrigin) return;
  if (e.data?.source !== 'attention-playground') return;
  log(frameLog, e.data.type, e.data.detail);
});
let seed = 3;
const commands = {
  play: () => send({ type: 'play' }),
  pause: () => send({ type: 'pause' }),
  step: () => send({ type: 'step', n: 10 }),
  reset: () => send({ type: 'reset' }),
  seed: () => send({ type: 'configure', config: { seed: ++seed } }),
};
for (const b of document.querySelectorAll('[data-frame]')) b.addEventListener('click', () => commands[b.dataset.frame]());
