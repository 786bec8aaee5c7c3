// npm run bench:capacity [-- --matrix | --sample N --seed S] — the learned rate against the simulator with
// real processes. Without --sample: the matrix's shapes (bench/capacity-matrix.ts); with it, N services
// drawn from the space the fleet model is judged over (bench/capacity-sample.ts).
if (process.argv.includes("--sample")) await import("./capacity-sample.js");
else await import("./capacity-matrix.js");
