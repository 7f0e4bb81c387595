// Saves a screenshot of the page with the demo's first failure selected and attributed:
//   node tests/e2e/screenshot.js URL OUT.png   (used by scripts/screenshot)
const [url, out] = process.argv.slice(2);
process.env.MEMTRACE_E2E_URL = url; // read by ./browser when it loads
const { launch, openPage } = require('./browser');

(async () => {
  const browser = await launch();
  try {
    const { page } = await openPage(browser);
    await page.waitForSelector('#summary', { timeout: 30000 });
    const first = await page.$('#failures .failure');
    if (first) await first.click();
    const attribute = await page.$('text=Attribute this case');
    if (attribute) await attribute.click();
    await page.waitForTimeout(1000);
    await page.screenshot({ path: out });
    console.log(`saved ${out}`);
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error(e.message); process.exit(1); });
