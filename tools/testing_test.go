package tools

import "testing"

func TestAsLocator(t *testing.T) {
	cases := map[string]string{
		`internal:role=button[name="Submit"i]`:                  `getByRole('button', { name: 'Submit' })`,
		`internal:role=button[name="Submit"s]`:                  `getByRole('button', { name: 'Submit', exact: true })`,
		`internal:role=heading[level=1][name="It's \"here\""i]`: `getByRole('heading', { level: 1, name: 'It\'s "here"' })`,
		`internal:role=checkbox`:                                `getByRole('checkbox')`,
		`internal:testid=[data-testid="save-btn"s]`:             `getByTestId('save-btn')`,
		`internal:label="Email"i`:                               `getByLabel('Email')`,
		`internal:text="Hello"s`:                                `getByText('Hello', { exact: true })`,
		`internal:attr=[placeholder="Search"i]`:                 `getByPlaceholder('Search')`,
		`internal:attr=[alt="Logo"i]`:                           `getByAltText('Logo')`,
		`#main >> internal:role=link[name="Home"i] >> nth=1`:    `locator('#main').getByRole('link', { name: 'Home' }).nth(1)`,
		`iframe >> internal:control=enter-frame >> css=button`:  `locator('iframe').contentFrame().locator('button')`,
		`internal:role=listitem >> internal:has-text="Apple"i`:  `getByRole('listitem').filter({ hasText: 'Apple' })`,
		`internal:role=row >> nth=0`:                            `getByRole('row').first()`,
	}
	for in, want := range cases {
		if got := asLocator(in); got != want {
			t.Errorf("asLocator(%s)\n got %s\nwant %s", in, got, want)
		}
	}
}
