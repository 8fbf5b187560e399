fn main() {
    println!("coco: under construction");
}
