// Limits: a file over the largest file (512 MiB unless raised in the settings) is refused before it is read, with a
// clear message naming the setting, and the page keeps working.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { launch, openPage, screenshot, waitField, dropFiles, FIXTURES } = require('./browser');

let browser;
test.before(async () => { browser = await launch(); });
test.after(async () => { await browser.close(); });

test('a 600 MiB file is refused with the limit named, and a good file still loads', async () => {
  const { page, problems } = await openPage(browser);
  await page.waitForSelector('#summary', { timeout: 20000 });
  // A sparse Blob: 600 MiB of zeros that the browser never has to hold as JS data.
  const dt = await page.evaluateHandle(() => {
    const dt = new DataTransfer();
    dt.items.add(new File([new ArrayBuffer(600 * 1024 * 1024)], 'huge.json', { type: 'application/json' }));
    return dt;
  });
  await page.dispatchEvent('#drop-zone', 'dragover', { dataTransfer: dt });
  await page.dispatchEvent('#drop-zone', 'drop', { dataTransfer: dt });
  await page.waitForSelector('#load-errors .error', { timeout: 15000 });
  const text = await page.textContent('#load-errors');
  assert.match(text, /huge\.json/);
  assert.match(text, /600 MiB \(629145600 bytes\); the limit is 512 MiB/);
  assert.match(text, /“Largest file” in the settings \(press \?\) at 600 MiB or more, or split the trace/);
  const good = fs.readFileSync(path.join(FIXTURES, 'locomo_locomo-2.json'));
  await dropFiles(page, [{ name: 'locomo_locomo-2.json', bytes: good }]);
  await waitField(page, 'operations', 99);
  await screenshot(page, 'limits-huge-file');
  assert.deepStrictEqual(problems, []);
});

test('the largest file is a setting under ?: lowered it refuses a file, kept after a reload, emptied back to the default', async () => {
  const { page, problems } = await openPage(browser);
  await page.waitForSelector('#summary', { timeout: 20000 });
  const setLimit = async (mib) => {
    await page.keyboard.press('?');
    await page.waitForSelector('#max-file-mib');
    await page.fill('#max-file-mib', mib);
    await page.$eval('#max-file-mib', (el) => el.dispatchEvent(new Event('change', { bubbles: true })));
    await page.keyboard.press('Escape');
  };
  await setLimit('1');
  const name = 'locomo_locomo-2.json';
  const good = fs.readFileSync(path.join(FIXTURES, name));
  await dropFiles(page, [{ name, bytes: good }]);
  await page.waitForSelector('#load-errors .error', { timeout: 15000 });
  const text = await page.textContent('#load-errors');
  assert.match(text, /1\.1 MiB \(1164234 bytes\); the limit is 1 MiB/);
  assert.match(text, /“Largest file” in the settings \(press \?\)/);
  // Saved with the settings (IndexedDB): the field still says 1 after a reload.
  await page.waitForTimeout(300);
  await page.reload();
  await page.waitForSelector('#summary', { timeout: 20000 });
  await page.keyboard.press('?');
  assert.strictEqual(await page.inputValue('#max-file-mib'), '1');
  await page.keyboard.press('Escape');
  await setLimit('');
  await dropFiles(page, [{ name, bytes: good }]);
  await waitField(page, 'operations', 99);
  assert.deepStrictEqual(problems, []);
});
