// Copy buttons for the embed code. The page works without this script: the snippets are plain
// read-only text fields, and the buttons stay hidden until this script shows them.
'use strict'

async function copyText (field) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(field.value)
    return
  }
  // Plain-http pages on other hosts have no clipboard API: fall back to selecting and copying.
  field.focus()
  field.select()
  if (!document.execCommand('copy')) throw new Error('copy refused')
}

for (const button of document.querySelectorAll('button[data-copy]')) {
  const field = document.getElementById(button.dataset.copy)
  if (!field) continue
  const label = button.textContent
  button.hidden = false
  button.addEventListener('click', async () => {
    try {
      await copyText(field)
      button.textContent = 'Copied'
    } catch {
      field.select()
      button.textContent = 'Press Ctrl+C to copy'
    }
    setTimeout(() => { button.textContent = label }, 2000)
  })
}
