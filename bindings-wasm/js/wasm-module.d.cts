// Types of web/shardid_wasm_bg.wasm (and web/shardid_wasm_public_bg.wasm) imported as a module,
// as Cloudflare Workers import one (wrangler, workerd's `wasm = embed`): the compiled module,
// for `init({ module_or_path })` of shardid-wasm/web. CommonJS types (`export =`), so that
// `import wasm from` reads the same from ES modules and CommonJS.
declare const module: WebAssembly.Module
export = module
