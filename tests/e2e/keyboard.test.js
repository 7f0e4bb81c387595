// Keyboard only: open a file, select the third failure, attribute it and read its verdict, open a
// group of the story, open a node in the inspector — with no mouse or pointer event on the page.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { launch, openPage, screenshot, waitField, FIXTURES } = require('./browser');

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

// Every trusted mouse or pointer event the page sees; a click that a key made has detail 0.
const recordMouse = () => {
  window.__mouse = [];
  for (const type of ['mousedown', 'mouseup', 'mousemove', 'pointerdown', 'pointerup', 'wheel', 'click', 'dblclick']) {
    window.addEventListener(type, (e) => {
      if (e.isTrusted && !(type === 'click' && e.detail === 0)) window.__mouse.push(type);
    }, true);
  }
};

/** Presses Tab until the focused element matches `selector`. */
async function tabTo(page, selector, most = 300) {
  for (let i = 0; i < most; i += 1) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
    await page.keyboard.press('Tab');
  }
  assert.fail(`Tab never reached ${selector}`);
}

test('keyboard only: open a file, third failure, verdict, a story group, the inspector', async () => {
  const { page, problems } = await openPage(browser, { init: recordMouse });
  // Listen for the file chooser before any key is pressed: the browser intercepts choosers only once a listener
  // exists, and turning that on is a round trip of its own (a chooser opened before it is lost).
  const chooserOpened = new Promise((resolve) => page.once('filechooser', resolve));
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForSelector('#failures .failure', { timeout: 20000 });

  await tabTo(page, '#file-input');
  await page.keyboard.press('Space');
  const chooser = await Promise.race([chooserOpened, new Promise((_, reject) => {
    setTimeout(() => reject(new Error('Space on the file input opened no file chooser in 30 s')), 30000).unref();
  })]);
  await chooser.setFiles(path.join(FIXTURES, 'locomo_locomo-1.json'));
  await waitField(page, 'failures', 6);
  await page.waitForFunction(() => document.querySelectorAll('#failures .failure').length === 6);

  await tabTo(page, '#failures .failure[data-case="2"]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#failures .failure[data-case="2"][aria-selected="true"]');

  await tabTo(page, '#attribute-one');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#verdict[data-op]', { timeout: 15000 });
  const verdict = await page.evaluate(() => ({ ...document.querySelector('#verdict').dataset }));
  assert.match(verdict.type, /^(Extraction|Update|Deletion|Retrieval|Response)Error$/);
  assert.match(await page.textContent('#verdict .verdict-type'), new RegExp(verdict.type));
  await page.waitForSelector(`#story .story-card.decisive[data-id="${verdict.op}"]`);

  await tabTo(page, '#story .story-group summary');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#story .story-group[open] li button');
  await tabTo(page, '#story .story-group[open] li button');
  const id = (await page.evaluate(() => document.activeElement.textContent)).trim();
  await page.keyboard.press('Enter');
  await page.waitForFunction((x) => (document.querySelector('#inspector')?.textContent || '').includes(x.split('@')[0]), id, { timeout: 5000 });

  await screenshot(page, 'keyboard-only');
  assert.deepStrictEqual(await page.evaluate(() => window.__mouse), []);
  assert.deepStrictEqual(problems, []);
});
