// capture.mjs records the snapshot fixtures in this directory from a real
// browser: Playwright's AI snapshot text before and after a DOM change, and
// Chromium's full accessibility tree (Accessibility.getFullAXTree) as JSON.
//
// It is not run by the tests. To refresh the fixtures:
//
//	npm install playwright-core@1.64.1   (in a scratch directory)
//	NODE_PATH=<scratch>/node_modules CHROMIUM=/usr/bin/chromium node capture.mjs
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');
const here = dirname(fileURLToPath(import.meta.url));

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
const page = await browser.newPage({ viewport: { width: 1000, height: 2400 } });
await page.setContent(readFileSync(join(here, 'lab.html'), 'utf8'));
await page.locator('iframe').contentFrame().locator('button').waitFor();

writeFileSync(join(here, 'lab.ai.yml'), await page.ariaSnapshot({ mode: 'ai' }));
writeFileSync(join(here, 'lab.boxes.ai.yml'), await page.ariaSnapshot({ mode: 'ai', boxes: true }));
const cdp = await page.context().newCDPSession(page);
const { nodes } = await cdp.send('Accessibility.getFullAXTree');
writeFileSync(join(here, 'lab.ax.json'), JSON.stringify(nodes, null, 1) + '\n');

await page.getByRole('button', { name: 'Press me', exact: true }).click();
writeFileSync(join(here, 'lab.after.ai.yml'), await page.ariaSnapshot({ mode: 'ai' }));
const after = await cdp.send('Accessibility.getFullAXTree');
writeFileSync(join(here, 'lab.after.ax.json'), JSON.stringify(after.nodes, null, 1) + '\n');
await browser.close();
