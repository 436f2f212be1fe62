// Harbour Lights: small progressive enhancements.
document.documentElement.classList.add("js");

function copyAddress() {
  var text = document.querySelector("address").innerText;
  navigator.clipboard.writeText(text);
}
