fn main() {
    let t = std::time::Instant::now();
    let r = conformance_spec::validate(&checkpoint_memory::registration(), &Default::default());
    println!("total {:?}", t.elapsed());
    let mut v: Vec<_> = r.tests.iter().map(|t| (t.duration_ms, t.id.clone())).collect();
    v.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    for (d, id) in v.iter().take(12) {
        println!("{d:8.1} {id}");
    }
    println!("sum {:.1}", v.iter().map(|x| x.0).sum::<f64>());
}
