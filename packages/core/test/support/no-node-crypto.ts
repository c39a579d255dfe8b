// Stands in for node:crypto (and node:buffer) in the Web Crypto test project: importing it fails loudly.
throw new Error('node:crypto is not available in this test project: the web build must use Web Crypto only');
